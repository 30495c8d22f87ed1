"""Command line: ``python -m rotode demo`` (also installed as the ``rotode`` command)."""
import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="rotode", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="integrate real cases; print accuracy and timing tables")
    demo.add_argument("--out", default="rotode-demo",
                      help="directory for the PNG plots (default: ./rotode-demo)")
    demo.add_argument("--no-plot", action="store_true", help="tables only")
    from rotode.studies import STUDIES, run_study

    study = sub.add_parser("study", help="reproduce one of the seeds' studies (CSV + figures)")
    study.add_argument("name", choices=sorted(STUDIES) + ["all"])
    study.add_argument("--out", default=None,
                       help="output directory (default: docs/figures)")
    study.add_argument("--quick", action="store_true", help="reduced sizes (smoke run)")
    study.add_argument("--no-plot", action="store_true", help="CSV only")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from rotode.demo import demo as run_demo

        run_demo(out_dir=args.out, plots=not args.no_plot)
    elif args.command == "study":
        names = sorted(STUDIES) if args.name == "all" else [args.name]
        for name in names:
            run_study(name, out_dir=args.out, quick=args.quick, plot=not args.no_plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
