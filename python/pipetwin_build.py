"""The build backend (PEP 517) of the package `pipetwin`: it builds the extension with the
project's own CMake build and writes the wheel itself.

`pip install --no-build-isolation ./python` calls build_wheel, which builds the CMake target
pipetwin_python and packs python/pipetwin/__init__.py with the extension it built.
PIPETWIN_BUILD_DIR names an already configured build folder to build the target in (CI reuses
its main build); without it, the folder build-python/ at the top of the repository is
configured (LibTorch and CUDA off, for the Python that runs pip; CMAKE_ARGS adds options) and
kept, so a second install compiles only what changed. CMAKE_BUILD_PARALLEL_LEVEL sets the jobs.

The wheel is written here rather than by setuptools, which on Debian 12 needs the separate
`wheel` package to write one: this way a bare virtual environment can install offline.
"""

import base64
import hashlib
import os
import pathlib
import shlex
import subprocess
import sys
import sysconfig
import zipfile

NAME = "pipetwin"
VERSION = "0.1.0"
PYTHON_DIR = pathlib.Path(__file__).resolve().parent
ROOT = PYTHON_DIR.parent
DIST_INFO = f"{NAME}-{VERSION}.dist-info"

METADATA = f"""Metadata-Version: 2.1
Name: {NAME}
Version: {VERSION}
Summary: A digital twin for distributed DNN training
Requires-Python: >=3.8
Provides-Extra: pandas
Requires-Dist: pandas; extra == "pandas"
"""


def _tag():
    """The wheel's tag: this interpreter, its ABI and platform (cp311-cp311-linux_x86_64)."""
    if sys.implementation.name != "cpython":
        raise RuntimeError(f"pipetwin builds for CPython, not {sys.implementation.name}")
    python = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{python}-{python}{sys.abiflags}-{platform}"


def _cmake(*args):
    print("pipetwin_build: cmake " + shlex.join(args), flush=True)
    subprocess.run(["cmake", *args], check=True)


def _build_folder():
    """The configured CMake build folder to build the extension in."""
    given = os.environ.get("PIPETWIN_BUILD_DIR")
    if given:
        build = pathlib.Path(given).resolve()
        if not (build / "CMakeCache.txt").is_file():
            raise RuntimeError(f"PIPETWIN_BUILD_DIR={given}: not a configured CMake build "
                               "folder (no CMakeCache.txt)")
        # CMake writes python/cmake_install.cmake only where it added the python/ folder.
        if not (build / "python" / "cmake_install.cmake").is_file():
            raise RuntimeError(f"PIPETWIN_BUILD_DIR={given}: configured without the Python "
                               "module (it needs pybind11-dev and python3-dev, and "
                               "PIPETWIN_WITH_PYTHON not OFF)")
        return build
    build = ROOT / "build-python"
    _cmake("-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
           "-DPIPETWIN_WITH_TORCH=OFF", "-DPIPETWIN_WITH_CUDA=OFF", "-DPIPETWIN_WITH_PYTHON=ON",
           "-DBUILD_TESTING=OFF", f"-DPython3_EXECUTABLE={sys.executable}",
           *shlex.split(os.environ.get("CMAKE_ARGS", "")))
    return build


def _build_extension():
    """Builds the extension and returns its path."""
    build = _build_folder()
    _cmake("--build", str(build), "--target", "pipetwin_python")
    package = build / "python" / "pipetwin"
    extension = package / ("_pipetwin" + sysconfig.get_config_var("EXT_SUFFIX"))
    if not extension.is_file():
        others = ", ".join(sorted(p.name for p in package.glob("_pipetwin*")))
        raise RuntimeError(f"{build} built no {extension.name} for {sys.executable}" +
                           (f" (it holds {others}, built for another Python)" if others else ""))
    return extension


def _record_line(name, data):
    """RECORD's line for the file `name` holding `data`: its hash and size."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def _dist_info():
    wheel = ("Wheel-Version: 1.0\nGenerator: pipetwin_build\nRoot-Is-Purelib: false\n"
             f"Tag: {_tag()}\n")
    return {f"{DIST_INFO}/METADATA": METADATA.encode(), f"{DIST_INFO}/WHEEL": wheel.encode(),
            f"{DIST_INFO}/top_level.txt": f"{NAME}\n".encode()}


# The hooks pip calls (PEP 517).

def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    for name, data in _dist_info().items():
        path = pathlib.Path(metadata_directory) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return DIST_INFO


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    extension = _build_extension()
    files = {
        f"{NAME}/__init__.py": (PYTHON_DIR / NAME / "__init__.py").read_bytes(),
        f"{NAME}/{extension.name}": extension.read_bytes(),
        **_dist_info(),
    }
    record = "".join(_record_line(name, data) for name, data in files.items())
    record += f"{DIST_INFO}/RECORD,,\n"
    wheel_name = f"{NAME}-{VERSION}-{_tag()}.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / wheel_name, "w",
                         zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
        wheel.writestr(f"{DIST_INFO}/RECORD", record)
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    raise RuntimeError("pipetwin builds from a checkout of its whole repository (the C++ "
                       "project around python/): pip install ./python")
