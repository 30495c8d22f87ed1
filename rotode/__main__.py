"""Command line of rotode: ``python -m rotode demo`` and ``python -m rotode study NAME``.

Also installed as the ``rotode`` command.
"""
import argparse
import sys

DESCRIPTION = "rotode: fast, trustworthy integration of rotations for SciPy."

EPILOG = """\
examples:
  python -m rotode demo                       tables in the terminal, plots in ./rotode-demo
  python -m rotode demo --no-plot             tables only
  python -m rotode study all --quick          every study at reduced size, into ./rotode-studies
  python -m rotode study work-precision --out docs/figures
                                              regenerate the figures committed in docs/figures
"""


def build_parser():
    from rotode.studies import DEFAULT_STUDY_DIR, STUDIES

    parser = argparse.ArgumentParser(prog="python -m rotode", description=DESCRIPTION,
                                     epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{demo,study}")
    demo = sub.add_parser("demo", help="integrate real cases with every method; print accuracy "
                                       "and timing tables with their conclusions")
    demo.add_argument("--out", default="rotode-demo",
                      help="directory for the PNG plots (default: ./rotode-demo)")
    demo.add_argument("--no-plot", action="store_true", help="tables only")
    study = sub.add_parser("study", help="reproduce a published study: CSV tables and figures")
    study.add_argument("name", choices=sorted(STUDIES) + ["all"])
    study.add_argument("--out", default=DEFAULT_STUDY_DIR,
                       help=f"output directory (default: ./{DEFAULT_STUDY_DIR}; "
                            "docs/figures regenerates the committed figures)")
    study.add_argument("--quick", action="store_true", help="reduced sizes (smoke run)")
    study.add_argument("--no-plot", action="store_true", help="CSV only")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from rotode.studies.demo import demo as run_demo

        return run_demo(out_dir=args.out, plots=not args.no_plot) or 0
    from rotode.studies import STUDIES, run_study

    names = sorted(STUDIES) if args.name == "all" else [args.name]
    for name in names:
        run_study(name, out_dir=args.out, quick=args.quick, plot=not args.no_plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
