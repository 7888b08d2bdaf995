"""``python -m skbayes_mh demo``: sample a small posterior with every acceptance test."""
import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m skbayes_mh")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="sample a Bayesian linear regression posterior "
                                            "with each acceptance test and compare with the exact answer")
    demo.add_argument("--n-data", type=int, default=20_000)
    demo.add_argument("--n-samples", type=int, default=5_000)
    demo.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    from ._demo import run_demo

    run_demo(n_data=args.n_data, n_samples=args.n_samples, seed=args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
