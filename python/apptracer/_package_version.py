"""The package's version, declared once: CMakeLists.txt's project(), which
the `apptracer` command prints for --version. The build writes it into
_version.py beside this module (the wheel carries it); the repository's
sources without a build read the declaration itself."""
import os
import re

# The declaration's line; pyproject.toml's version regex matches it too.
DECLARATION = re.compile(r"^project\(apptracer VERSION ([^ )]+)", re.MULTILINE)
SOURCE_DECLARATION = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                  "CMakeLists.txt")


def declared_version(cmake_lists):
    """The version a CMakeLists.txt declares; None when it declares none."""
    with open(cmake_lists, encoding="utf-8") as f:
        match = DECLARATION.search(f.read())
    return match.group(1) if match else None


def version():
    try:
        from ._version import VERSION
        return VERSION
    except ImportError:
        pass
    found = declared_version(SOURCE_DECLARATION) if os.path.exists(SOURCE_DECLARATION) else None
    if found is None:
        raise ImportError("apptracer: this package has no version: install the wheel or run it "
                          "from the repository's python/ directory")
    return found
