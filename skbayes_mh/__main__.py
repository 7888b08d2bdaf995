"""``python -m skbayes_mh demo``: fit a tall logistic regression with every acceptance test.
``python -m skbayes_mh compile``: compile every numba kernel now, on every core."""
import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m skbayes_mh")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="fit Bayesian logistic regression with every "
                                            "acceptance test and compare with the exact one")
    demo.add_argument("--n-data", type=int, default=20_000)
    demo.add_argument("--n-draws", type=int, default=1000)
    demo.add_argument("--seed", type=int, default=0)
    compile_ = commands.add_parser("compile", help="compile every numba kernel now, one "
                                                   "process per core (cached on disk)")
    compile_.add_argument("--jobs", type=int, default=None, help="processes (default: cores)")
    compile_.add_argument("--float64-only", action="store_true",
                          help="only the kernels for float64 arrays (not float32 or sparse "
                               "data)")
    args = parser.parse_args(argv)
    if args.command == "compile":
        from ._compile import compile_kernels

        seconds = compile_kernels(args.jobs, other_layouts=not args.float64_only,
                                  verbose=True)
        print(f"skbayes_mh: every kernel compiled and cached in {seconds:.1f} s.")
        return 0
    from .demo import run_demo

    run_demo(n_data=args.n_data, n_draws=args.n_draws, seed=args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
