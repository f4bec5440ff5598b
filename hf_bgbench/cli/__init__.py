"""The ``bgbench`` command line. Each sub-command lives in its own module with a
``register(subparsers)`` function; add new ones to ``COMMANDS``. The tasks' commands come
first, one per registered task (:mod:`hf_bgbench.cli.tasks`); a benchmark's own extra
commands (its spec's ``cli_commands`` hook, e.g. ``bgbench edit``) come last."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

COMMANDS = [
    "tasks",  # bgbench evaluate, challenge, ...: every registered task, in registry order
    "report",
    "compare",
    "table",
    "export",
    "list_benchmarks",
    "download",
    "build",
    "convert",
    "validate",
    "publish",
    "publish_results",
    "publish_metrics",
    "publish_space",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bgbench",
        description="Measure how much an image classifier relies on the background.",
    )
    from hf_bgbench import __version__

    parser.add_argument("--version", action="version", version=f"bgbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"hf_bgbench.cli.{name}").register(sub)
    from hf_bgbench.cli.benchmark_commands import add_benchmark_commands

    add_benchmark_commands(sub, "cli_commands")
    for command in all_parsers(parser):
        # Every option's help shows its default.
        command.formatter_class = DefaultsHelpFormatter
    return parser


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Appends "(default: X)" to an option's help unless the help already says its default
    or there is none to say (None, False, a flag)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or any(action.default is v for v in (None, False, argparse.SUPPRESS)):
            return text
        if not action.option_strings and action.nargs not in ("?", "*"):
            return text
        return f"{text} (default: %(default)s)"


def all_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """``parser`` and every sub-command parser below it."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found += all_parsers(child)
    return found


def main(argv: list[str] | None = None) -> int:
    if (sys.argv[1:] if argv is None else argv) == ["--version"]:
        # answered before the parser is built: that imports every task, and torch with them
        from hf_bgbench import __version__

        print(f"bgbench {__version__}")
        return 0
    parser = build_parser()
    args = parser.parse_args(argv)
    from hf_bgbench.cli.environment import check_environment, explain_torch_error

    try:
        check_environment()  # whatever the command and whatever is cached
        return int(args.func(args) or 0)
    except KeyboardInterrupt as stop:
        # only a run that counted its cache says what is in it (Interrupted.cached); any
        # other command (a build, a conversion, a download: each resumes on its own terms)
        # or a run stopped before it looked at its cache says nothing it does not know
        cached = getattr(stop, "cached", None)
        if getattr(stop, "said", None):  # a step that says what it keeps (the text step)
            done = f" {stop.said}"
        elif cached:
            done = f"; {cached} image(s) cached, re-run the same command to resume"
        elif cached == 0:
            done = "; nothing was cached yet"
        else:
            done = ""
        print(f"\nbgbench {args.command}: interrupted{done}.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`bgbench table ... | head`): stop as a Unix tool does, with
        # no error, and no second one when Python flushes stdout on exit
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - open until the process ends
        return 141  # 128 + SIGPIPE, as a shell reports it
    except (ValueError, FileNotFoundError, OSError, RuntimeError) as err:
        # Our errors are written to be read by a person: print them without a traceback.
        print(f"bgbench {args.command}: error: {explain_torch_error(err) or err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
