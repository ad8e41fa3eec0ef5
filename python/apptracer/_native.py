"""Where the package's native parts are: the `apptracer` command and the tracer
library, installed by CMake inside this package (bin/, lib/), where the
command finds the library (../lib) as in any installation. A build lays the
package out the same way in BUILD/python (python/CMakeLists.txt)."""
import os

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
TRACER_LIBRARY = os.path.join(PACKAGE_DIR, "lib", "libapptracer.so")


def command():
    """The path of the `apptracer` executable."""
    path = os.path.join(PACKAGE_DIR, "bin", "apptracer")
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(
            f"apptracer: the apptracer command is missing ({path}): import the package from a "
            "build (PYTHONPATH=BUILD/python, which scripts/setup.sh makes) or install the wheel")
    return path
