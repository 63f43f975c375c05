"""Checks of the Python API's arguments, in the caller's terms (docs/python.md, "Errors"): a wrong
type or value is a clustersim.InputError naming the argument as the caller wrote it and what it
expects, raised before anything runs, never an error from the layers below (os.fspath, json,
pandas, pybind11) that names their internals."""

import os

from . import _core

__all__ = ["describe", "check_bool", "check_path", "check_output_path", "check_cluster",
           "check_params", "check_option_names"]


def describe(value):
    """`int 5`, `str 'walltime=exact'`: what the caller passed, for messages."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _fail(name, expected, value):
    raise _core.InputError(f"{name}: expected {expected}, not {describe(value)}")


def check_bool(value, name):
    if not isinstance(value, bool):
        _fail(name, "True or False", value)
    return value


def check_path(value, name, must_exist=False, what="a file path"):
    """A str or os.PathLike as a str; with must_exist, the file must be there."""
    if isinstance(value, bytes) or not isinstance(value, (str, os.PathLike)):
        _fail(name, f"{what} (a str or os.PathLike)", value)
    path = os.fspath(value)
    if not path:
        _fail(name, f"{what}, not an empty string", value)
    if must_exist and not os.path.exists(path):
        raise _core.InputError(f"{name}: {path}: no such file")
    return path


def check_output_path(value, name):
    """An output file whose folder exists (the folder is not made: a mistyped path is an error)."""
    path = check_path(value, name, what="an output file path")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise _core.InputError(f"{name}: {path}: the folder {folder} does not exist (create it "
                               "first)")
    return path


def check_cluster(cluster, name="cluster"):
    """(cluster option, spec JSON text): a preset name or spec path, or a spec dict."""
    import json
    if isinstance(cluster, dict):
        try:
            return "dict", json.dumps(cluster)
        except (TypeError, ValueError) as error:
            raise _core.InputError(f"{name}: the spec dict is not JSON data ({error})") from None
    if isinstance(cluster, bytes) or not isinstance(cluster, (str, os.PathLike)):
        _fail(name, "a preset name (clustersim.cluster_presets()), a cluster spec file path or a "
              "spec dict (docs/cluster.md)", cluster)
    text = os.fspath(cluster)
    if not text:
        _fail(name, "a preset name or a spec path, not an empty string", cluster)
    return text, ""


def check_params(params):
    """{key: value} with str keys and str, int, float or bool values (--param key=value)."""
    if params is None:
        return {}
    if not isinstance(params, dict):
        _fail("params", "a dict {key: value} of policy and placement parameters, e.g. "
              "{'walltime': 'exact'} or {'easy:walltime': 'exact'}", params)
    out = {}
    for key, value in params.items():
        if not isinstance(key, str) or not key:
            _fail("params", "parameter names as non-empty str", key)
        if not isinstance(value, (str, int, float, bool)):
            _fail(f"params[{key!r}]", "a str, int, float or bool", value)
        out[key] = value
    return out


def check_option_names(options, valid, call):
    """Raises InputError for the first keyword argument of `call` that is no option, naming the
    nearest valid one."""
    for key in options:
        if key in valid:
            continue
        near = _core.nearest_name(key, sorted(valid))
        hint = f"; did you mean {near}?" if near else ""
        raise _core.InputError(f"{call}: unknown option {key}{hint} (the options of "
                               f"`clustersim run` with underscores for dashes: "
                               f"{', '.join(sorted(valid))})")
