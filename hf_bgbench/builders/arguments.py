"""Options declared once: a field of an options dataclass, declared with :func:`option` (or
:func:`required`), holds its name, type and default; its metadata (:class:`Option`) holds
what a front end needs besides -- the help text, the command-line flags, how a flag's text is
read, the choices. :func:`add_options` makes the argparse arguments from the declarations and
:func:`read_options` reads them back as keyword arguments.

The tasks' options (:mod:`hf_bgbench.tasks.options`) and the benchmarks' build, convert and
download commands (:mod:`hf_bgbench.builders.commands`) are both declared this way; it lives
here, below the benchmark folders, so that their commands can use it too.
"""

from __future__ import annotations

import argparse
import inspect
import os
import typing
from collections.abc import Callable, Iterable
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

Help = str | Callable[[Any], str]  # a callable gets the context (a Task; the benchmark specs)
Declared = tuple[str, "Option", Any]  # (field name, its Option, its default; MISSING: required)


def default_workers() -> int:
    """The CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


@dataclass(frozen=True)
class Option:
    """What a front end needs to know of one option besides its name, type and default."""

    help: Help
    flags: tuple[str, ...] = ()  # default: --<name with dashes>; no leading dash: positional
    parse: Callable[[str], Any] | None = None  # reads the flag's text (argparse ``type``)
    choices: tuple[Any, ...] | None = None
    metavar: str | tuple[str, ...] | None = None
    many: bool = False  # several values, space- or comma-separated
    count: int | None = None  # exactly this many values (``--from KIND DIR``)
    negated: bool = False  # the flag switches a True default off (--no-cache -> use_cache)
    cli: bool = True  # offered on the command line (else: the Python API only)
    cli_default: Any = None  # the command line's default, when it has one (callable: computed)
    space_cap: tuple[str, int] | None = None  # the Space caps it: (environment variable, default)
    space_cap_shared: bool = False  # the cap is a job's total, shared by the variants picked
    group: tuple[str, str] | None = None  # a section of the help: (title, description)

    def text(self, context: Any) -> str:
        return self.help(context) if callable(self.help) else self.help

    def command_line_default(self, default: Any) -> Any:
        """The value the command line gives when the flag is left out: ``cli_default``
        (computed when callable), else the field's ``default``."""
        given = self.cli_default() if callable(self.cli_default) else self.cli_default
        return default if given is None else given


def folder_path(text: str) -> Path:
    """A folder named on the command line; an empty name (``--output ""``, which would be
    the current folder) is refused."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "an empty name; give the folder to write (created when missing)"
        )
    return Path(text)


def option(default: Any, help: Help, **details: Any) -> Any:
    """A dataclass field: ``default`` and the :class:`Option` ``help`` + ``details``."""
    return field(default=default, metadata={"option": Option(help, **details)})


def required(help: Help, **details: Any) -> Any:
    """A dataclass field without a default: a positional argument (``flags=("src",)``) or a
    required option; the options class is then declared ``kw_only``."""
    return field(metadata={"option": Option(help, **details)})


def declared(cls: type) -> list[Declared]:
    """(name, option, default) of every field of an options class, in its order. An option
    declared without ``parse`` reads its flag's text as the field's type when that is an
    int, a float or a Path (or one of them or None): the type is declared once."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in fields(cls):
        opt = f.metadata["option"]
        hint = hints[f.name]
        kinds = [t for t in typing.get_args(hint) or (hint,) if t is not type(None)]
        if opt.parse is None and kinds in ([int], [float], [Path]):
            opt = replace(opt, parse=kinds[0])
        out.append((f.name, opt, f.default))
    return out


def keywords(options: Any) -> dict[str, Any]:
    """The values of an options object, by field name."""
    return {f.name: getattr(options, f.name) for f in fields(options)}


def shared_fields(options: Any, target: type, **overrides: Any) -> dict[str, Any]:
    """The values of ``options``'s fields that the dataclass ``target`` also has (by name),
    with ``overrides``: the keyword arguments that make a ``target`` of them."""
    names = {f.name for f in fields(target)}
    return {k: v for k, v in keywords(options).items() if k in names} | overrides


def paragraph(cls: type, index: int) -> str:
    """Paragraph ``index`` of ``cls``'s docstring, on one line. An options class documents
    its sub-command in its docstring (paragraph 0: the ``--help`` description); prose that
    cites a benchmark's release by name is kept there, in documentation."""
    return " ".join(inspect.getdoc(cls).split("\n\n")[index].split())


def flag(name: str, opt: Option) -> str:
    """The option's first command-line flag (how error messages name it)."""
    return opt.flags[0] if opt.flags else "--" + name.replace("_", "-")


def add_options(p: argparse.ArgumentParser, options: Iterable[Declared], context: Any) -> None:
    """An argument per command-line option, in order (``context``: what a computed help text
    gets). A flag without a leading dash is positional; a field without a default is a
    required option; a bool is a flag (a negated one switches its True default off); ``many``
    takes several values, space- or comma-separated. :func:`read_options` reads them back."""
    bindings, groups = [], {}
    for name, opt, default in options:
        if not opt.cli:
            continue
        target: Any = p
        if opt.group is not None:
            if opt.group not in groups:
                groups[opt.group] = p.add_argument_group(*opt.group)
            target = groups[opt.group]
        kwargs: dict[str, Any] = {"help": opt.text(context)}
        if isinstance(default, bool):
            kwargs["action"] = "store_true"
        else:
            if default is MISSING:  # (a positional argument is required as it is)
                if flag(name, opt).startswith("-"):
                    kwargs["required"] = True
            else:
                kwargs["default"] = opt.command_line_default(default)
            nargs = "+" if opt.many else opt.count
            extra = {"type": opt.parse, "choices": opt.choices, "metavar": opt.metavar}
            kwargs.update({k: v for k, v in {**extra, "nargs": nargs}.items() if v is not None})
        action = target.add_argument(*(opt.flags or (flag(name, opt),)), **kwargs)
        bindings.append((name, action.dest, opt))
    p.set_defaults(option_bindings=bindings)


def read_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of the options :func:`add_options` added, from ``args``."""
    out = {}
    for name, dest, opt in args.option_bindings:
        value = getattr(args, dest)
        if opt.negated:
            value = not value
        elif opt.many and value is not None:  # --variants a b and --variants a,b -> [a, b]
            value = [v for text in value for v in text.split(",") if v]
            if not value:  # (--variants "" would otherwise mean "all", as if left out)
                raise ValueError(
                    f"{flag(name, opt)} {' '.join(getattr(args, dest))!r}: names no value; "
                    f"give at least one (space- or comma-separated), or leave "
                    f"{flag(name, opt)} out."
                )
        out[name] = value
    return out
