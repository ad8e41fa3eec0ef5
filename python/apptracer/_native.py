"""Where the wheel's native parts are: the `apptracer` command and the tracer
library, installed by CMake inside this package (bin/, lib/), where the
command finds the library (../lib) as in any installation."""
import os

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
TRACER_LIBRARY = os.path.join(PACKAGE_DIR, "lib", "libapptracer.so")


def command():
    """The path of the `apptracer` executable."""
    path = os.path.join(PACKAGE_DIR, "bin", "apptracer")
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"apptracer: the apptracer command is missing ({path}); "
                                "reinstall the package")
    return path
