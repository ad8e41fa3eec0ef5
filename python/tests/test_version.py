"""One version: the Python package, its metadata and the `apptracer`
command it carries all report the one CMakeLists.txt declares."""
import importlib.metadata
import os
import re
import subprocess

import pytest

import apptracer
from apptracer import _native, _package_version

REPOSITORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def command_version():
    printed = subprocess.run([_native.command(), "--version"], capture_output=True, text=True,
                             check=True).stdout.split()
    assert printed[0] == "apptracer" and len(printed) == 2, printed
    return printed[1]


def test_package_reports_the_command_version():
    assert apptracer.__version__ == command_version()


def test_source_tree_reads_the_command_version():
    declared = _package_version.declared_version(os.path.join(REPOSITORY, "CMakeLists.txt"))
    assert declared == command_version()


def test_wheel_metadata_reads_the_command_version():
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(REPOSITORY, "python", "pyproject.toml"), "rb") as f:
        settings = tomllib.load(f)["tool"]["scikit-build"]["metadata"]["version"]
    with open(os.path.join(REPOSITORY, "python", settings["input"]), encoding="utf-8") as f:
        match = re.search(settings["regex"], f.read(), re.MULTILINE)
    assert match and match.group("value") == command_version()


def test_installed_metadata_is_the_package_version():
    try:
        installed = importlib.metadata.version("apptracer")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("apptracer runs from its sources here, not from an installed wheel")
    assert installed == apptracer.__version__
