"""Every function of rotode fits in a reader's head: no body longer than `MAX_LINES` lines
(its docstring aside), no internal function with more than `MAX_PARAMS` parameters.

The functions are read from the sources: those of the ``.py`` files with `ast`, those of the
``.pyx``, ``.pxd`` and ``.pxi`` files (``def``, ``cdef`` and ``cpdef`` functions and methods,
at any depth) by `cython_functions`, a small parser of indentation and brackets.  A body is
counted from its first statement after the docstring to its last statement, comments and
blank lines between them included.  Parameters are counted without ``self`` and ``cls`` (a
``*`` or ``/`` marker is not one; ``*args`` and ``**kwargs`` are).  A public signature (a
public name of a public module, or a method of a public class) is API and may take more
parameters, but only when `PUBLIC_API` names it with the reason: a long parameter list is a
choice made once, in the open.
"""
import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "rotode"

MAX_LINES = 120
MAX_PARAMS = 10

#: Public signatures allowed more than `MAX_PARAMS` parameters: (file, qualified name) and why.
PUBLIC_API = {
    ("integration.py", "integrate"):
        "public API: rotode.integrate's keywords are its documented options (rtol, atol, "
        "first_step, max_step, max_steps, frame, t_eval, save_every, workers, events, ...)",
    ("solvers.py", "NativeSolver.__init__"):
        "public API: the constructor of rotode.solvers.NativeSolver takes SciPy's OdeSolver "
        "arguments (fun, t0, y0, t_bound, ...) and rotode's method options, as keywords",
    ("ivp.py", "solve_ivp"):
        "public API: scipy.integrate.solve_ivp's ten parameters, and rotode's keyword "
        "`quaternions` (issue 28)",
}


def _sources(*patterns):
    return sorted(p for pattern in patterns for p in PACKAGE.rglob(pattern)
                  if "build" not in p.relative_to(PACKAGE).parts)


class Function:
    """One function: where it is, its qualified name, body length and parameter count."""

    def __init__(self, path, qualname, line, length, params, public):
        self.path = path
        self.qualname = qualname
        self.line = line
        self.length = length
        self.params = params
        self.public = public

    @property
    def where(self):
        return f"rotode/{_relative(self.path)}:{self.line} {self.qualname}"


def _relative(path):
    """`path` under rotode/ (``_driver.pyx``, ``studies/demo.py``), else its name."""
    return path.relative_to(PACKAGE) if path.is_relative_to(PACKAGE) else Path(path.name)


def _public_module(path):
    parts = _relative(path).with_suffix("").parts
    return not any(p.startswith("_") and p != "__init__" for p in parts)


def _public_name(name):
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


# ---- Python ------------------------------------------------------------------------------------

def _count_args(args, method):
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    if method and names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names)


def _body_lines(body):
    """Lines from the first statement after the docstring to the last statement."""
    if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        body = body[1:]
    if not body:
        return 0
    first = min([body[0].lineno] + [d.lineno for d in getattr(body[0], "decorator_list", [])])
    return body[-1].end_lineno - first + 1


def python_functions(path):
    """Every function and method of the .py file `path`, nested ones too."""
    found = []
    module_public = _public_module(path)

    def visit(node, prefix, public, in_class):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".",
                      public and _public_name(child.name), True)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = prefix + child.name
                found.append(Function(path, qual, child.lineno, _body_lines(child.body),
                                      _count_args(child.args, in_class),
                                      public and _public_name(child.name)))
                visit(child, qual + ".<locals>.", False, False)
            else:
                visit(child, prefix, public, in_class)

    visit(ast.parse(path.read_text(), str(path)), "", module_public, False)
    return found


# ---- Cython ------------------------------------------------------------------------------------

_STRING = re.compile(r"""[rRbBuUfF]{0,2}('''|\"\"\"|'|")""")
_HEAD = re.compile(r"(?:async\s+)?(?:def|cdef|cpdef)\b")
_BLOCK = re.compile(r"(?:cdef|cpdef|ctypedef)\s+(?:public\s+|packed\s+|readonly\s+)*"
                    r"(class|struct|union|enum|extern|cppclass|fused)\b|ctypedef\b|class\b")
_NAME = re.compile(r"(\w+)\($")


def _code(lines):
    """Each line with its strings blanked and its comment cut, and whether the line starts
    inside a triple-quoted string (its text is not code)."""
    out, inside, quote = [], [], None
    for line in lines:
        inside.append(quote is not None)
        chars, k = [], 0
        while k < len(line):
            if quote is not None:
                if line.startswith("\\", k):
                    k += 2
                    continue
                if line.startswith(quote, k):
                    chars.append(quote)
                    k += len(quote)
                    quote = None
                    continue
                chars.append(" ")
                k += 1
                continue
            if line[k] == "#":
                break
            m = _STRING.match(line, k)
            if m and (k == 0 or not (line[k - 1].isalnum() or line[k - 1] == "_")
                      or m.group(0)[0] in "'\""):
                quote = m.group(1)
                chars.append(m.group(0))
                k = m.end()
                continue
            chars.append(line[k])
            k += 1
        if quote is not None and len(quote) == 1:
            quote = None                            # (an unterminated short string: no code)
        out.append("".join(chars).rstrip())
    return out, inside


def _indent(line):
    return len(line) - len(line.lstrip())


def _split_params(text):
    """The parameters of a signature's parenthesised list `text` (without the parentheses)."""
    params, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            params.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        params.append(cur.strip())
    return [p for p in params if p not in ("*", "/")]


def _signature(code, start):
    """(last line, text) of the statement starting at `start`: its lines joined until the
    brackets close."""
    text, depth, j = "", 0, start
    while True:
        line = code[j]
        text += " " + line.strip()
        depth += sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")
        if depth <= 0 or j + 1 >= len(code):
            return j, text.strip()
        j += 1


def _params_of(header):
    """The parameter list of `header` (``cdef int f(double x, ...) noexcept nogil:``), its
    name, or None when it is no function (a variable, a function-pointer declaration)."""
    depth, start = 0, None
    for k, ch in enumerate(header):
        if ch == "(":
            if depth == 0 and start is None:
                m = _NAME.search(header[:k + 1])
                if m is None or header[:k].rstrip().endswith(("(", "*")):
                    return None
                start, name = k + 1, m.group(1)
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0 and start is not None:
                return name, _split_params(header[start:k])
    return None


def cython_functions(path):
    """Every def/cdef/cpdef function and method with a body in the Cython file `path`."""
    lines = path.read_text().splitlines()
    code, inside = _code(lines)
    module_public = _public_module(path) and path.suffix != ".pxd"
    found = []
    stack = []                                  # (indent, qualified prefix, public, class?)
    skip_below = None                           # indentation of a block whose text is skipped
    j = 0
    while j < len(lines):
        line = code[j]
        if inside[j] or not line.strip():
            j += 1
            continue
        ind = _indent(line)
        if skip_below is not None:
            if ind > skip_below:
                j += 1
                continue
            skip_below = None
        while stack and ind <= stack[-1][0]:
            stack.pop()
        stripped = line.strip()
        prefix, public, in_class = ("", module_public, False) if not stack else stack[-1][1:]
        block = _BLOCK.match(stripped)
        if block:
            end, text = _signature(code, j)
            kind = block.group(1)
            if kind == "class" or (kind is None and stripped.startswith("class")):
                name = re.match(r"(?:cdef\s+(?:public\s+)?)?class\s+(\w+)", stripped).group(1)
                stack.append((ind, prefix + name + ".", public and _public_name(name), True))
            elif text.endswith(":"):
                skip_below = ind                # struct, enum, extern, ctypedef blocks
            j = end + 1
            continue
        if not _HEAD.match(stripped):
            j += 1
            continue
        end, text = _signature(code, j)
        found_params = _params_of(text)
        body_inline = not text.endswith(":") and re.search(r"\)[^()]*:\s*\S", text)
        if found_params is None or not (text.endswith(":") or body_inline):
            j = end + 1                         # a declaration: no body
            continue
        name, params = found_params
        if in_class and params and re.fullmatch(r"(self|cls)\b.*", params[0]):
            params = params[1:]
        qual = prefix + name
        python_visible = not stripped.startswith("cdef")
        fn_public = public and python_visible and _public_name(name)
        body_start, body_end = _body(code, inside, end, ind)
        length = 0 if body_inline else body_end - body_start + 1 if body_start else 0
        if body_inline:
            length = 1
        found.append(Function(path, qual, j + 1, length, len(params), fn_public))
        stack.append((ind, qual + ".<locals>.", False, False))
        j = end + 1
    return found


def _body(code, inside, end, ind):
    """(first, last) 0-based lines of the statements of the body after line `end` (the
    header's last), the docstring left out; (None, None) for an empty body."""
    k = end + 1
    lines = []
    while k < len(code):
        if inside[k]:                           # inside a string that a body line opened
            if lines and lines[-1] == k - 1:
                lines.append(k)
            k += 1
            continue
        if not code[k].strip():
            k += 1
            continue
        if _indent(code[k]) <= ind:
            break
        lines.append(k)
        k += 1
    if lines and re.match(r"""\s*[rRuU]?('|")""", code[lines[0]]):
        first = lines.pop(0)                    # the docstring, up to its closing quotes
        while lines and inside[lines[0]] and lines[0] == first + 1:
            first = lines.pop(0)
    if not lines:
        return None, None
    return lines[0], lines[-1]


def all_functions():
    found = []
    for path in _sources("*.py"):
        found += python_functions(path)
    for path in _sources("*.pyx", "*.pxd", "*.pxi"):
        found += cython_functions(path)
    return found


FUNCTIONS = all_functions()


def _key(f):
    return (str(_relative(f.path)), f.qualname)


# ---- the parser reads what it should -----------------------------------------------------------

def test_the_parser_sees_the_functions():
    """Known functions of every kind are found, with their sizes (else the tests below would
    pass on nothing)."""
    by = {_key(f): f for f in FUNCTIONS}
    assert ("_driver.pyx", "outcome") in by                    # a def of a .pyx
    assert ("_driver_pair.pxi", "Engine.__init__") in by       # a method of a cdef class
    assert ("_driver.pxd", "stops_before") in by               # a cdef inline of a .pxd
    assert by[("_driver.pxd", "stops_before")].params == 4
    assert by[("erk.pxd", "erk_rms")].params == 3
    assert ("solvers.py", "NativeSolver.__init__") in by       # a .py method
    assert len([f for f in FUNCTIONS if f.path.suffix in (".pyx", ".pxd", ".pxi")]) > 300
    # declarations without a body (a .pxd's cdef methods, ctypedefs, extern functions) are none
    assert ("_driver.pxd", "Engine.attach") not in by
    assert not any(f.qualname in ("begin_fn", "rotode_load_flag", "rigid_erk_body")
                   for f in FUNCTIONS)


def test_the_parser_on_a_sample(tmp_path):
    """The Cython parser on the forms it must tell apart."""
    sample = tmp_path / "sample.pyx"
    sample.write_text('''
cdef extern from *:
    """
    static int not_a_function(int a) { return a; }
    """
    int declared(int a, int b) noexcept nogil

ctypedef int (*fn_t)(int a, int b, int c) noexcept nogil

cdef struct S:
    int (*member)(int a, int b) noexcept nogil
    double x

cdef int (*pointer)(int a)

cdef int f(int a,
           double b, double* c,
           const double[::1] d) noexcept nogil:
    """Doc.

    def not_a_function(x):
    """
    cdef int k = 0
    # a comment

    return k


def g(x, y=(1, 2), *args, z=3, **kw):
    """One line."""
    return x


cdef class C:
    cdef int c

    cpdef int m(self, int a):
        s = "def h(a, b):"
        return a

    def __init__(self, a, b):
        def inner(u):
            return u
        self.c = inner(a) + b
''')
    fns = {f.qualname: f for f in cython_functions(sample)}
    assert set(fns) == {"f", "g", "C.m", "C.__init__", "C.__init__.<locals>.inner"}
    assert (fns["f"].params, fns["f"].length) == (4, 4)
    assert (fns["g"].params, fns["g"].length) == (5, 1)
    assert (fns["C.m"].params, fns["C.m"].length) == (1, 2)
    assert (fns["C.__init__"].params, fns["C.__init__"].length) == (2, 3)
    assert fns["g"].public and fns["C.m"].public and not fns["f"].public


# ---- the rules ---------------------------------------------------------------------------------

def test_no_function_is_longer_than_the_limit():
    long = [f"{f.where}: {f.length} lines" for f in FUNCTIONS if f.length > MAX_LINES]
    assert not long, (f"functions longer than {MAX_LINES} lines (docstring aside):\n"
                      + "\n".join(long))


def test_no_internal_function_takes_too_many_parameters():
    wide = [f"{f.where}: {f.params} parameters" for f in FUNCTIONS
            if f.params > MAX_PARAMS and _key(f) not in PUBLIC_API]
    assert not wide, (f"functions with more than {MAX_PARAMS} parameters (an internal one "
                      "takes a struct; a public one is listed in PUBLIC_API with the reason):\n"
                      + "\n".join(wide))


@pytest.mark.parametrize("key", sorted(PUBLIC_API))
def test_the_exemptions_are_public_and_needed(key):
    """Each exemption names a public signature that exists and still needs it."""
    found = [f for f in FUNCTIONS if _key(f) == key]
    assert found, f"{key} names no function"
    for f in found:
        assert f.public, f"{f.where} is not public API: it takes a struct instead"
        assert f.params > MAX_PARAMS, f"{f.where} no longer needs its exemption"
