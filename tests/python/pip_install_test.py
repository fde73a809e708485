"""`pip install ./python` into a fresh virtual environment, offline, with the build folder
the tests run from (PIPETWIN_BUILD_DIR): the installed package imports from outside the
source tree and simulates as the command line does, and uninstalls cleanly.

Run by ctest with PIPETWIN_BUILD_DIR, PIPETWIN_BINARY and PIPETWIN_SOURCE_DIR set."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

BUILD = os.environ["PIPETWIN_BUILD_DIR"]
BINARY = os.environ["PIPETWIN_BINARY"]
SOURCE = os.environ["PIPETWIN_SOURCE_DIR"]

# Imported by the venv's Python, in a folder outside the source and build trees.
QUICKSTART = """
import json, pipetwin
result = pipetwin.simulate(pipetwin.load("builtin:quickstart"))
print(json.dumps({"file": pipetwin.__file__, "result": result.to_dict()}))
"""


class PipInstall(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.venv = os.path.join(cls.tmp.name, "venv")
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", cls.venv],
                       check=True)
        cls.python = os.path.join(cls.venv, "bin", "python")
        cls.env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        cls.env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        cls.install = cls.pip("install", "--no-build-isolation", "--no-index", "--no-cache-dir",
                              os.path.join(SOURCE, "python"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def pip(cls, *args, build_dir=BUILD):
        env = dict(cls.env, PIPETWIN_BUILD_DIR=build_dir)
        return subprocess.run([cls.python, "-m", "pip", *args], env=env, capture_output=True,
                              text=True, check=False)

    def run_python(self, code):
        run = subprocess.run([self.python, "-c", code], cwd=self.tmp.name, env=self.env,
                             capture_output=True, text=True, check=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.stdout

    def test_installed_package_simulates_the_quickstart(self):
        self.assertEqual(self.install.returncode, 0, self.install.stdout + self.install.stderr)
        out = json.loads(self.run_python(QUICKSTART))
        # Imported from the venv, not from the source or the build tree.
        self.assertTrue(os.path.realpath(out["file"]).startswith(
            os.path.realpath(self.venv) + os.sep), out["file"])
        cli = subprocess.run([BINARY, "simulate", "builtin:quickstart", "--json"],
                             capture_output=True, text=True, check=True)
        self.assertEqual(out["result"], json.loads(cli.stdout))

    def test_pip_knows_the_package_and_removes_it_whole(self):
        self.assertEqual(self.install.returncode, 0, self.install.stdout + self.install.stderr)
        show = self.pip("show", "--files", "pipetwin")
        self.assertEqual(show.returncode, 0, show.stderr)
        self.assertIn("Name: pipetwin", show.stdout)
        self.assertIn("pipetwin/__init__.py", show.stdout)
        self.assertIn("pipetwin/_pipetwin", show.stdout)
        removed = self.pip("uninstall", "--yes", "pipetwin")
        self.assertEqual(removed.returncode, 0, removed.stderr)
        gone = subprocess.run([self.python, "-c", "import pipetwin"], cwd=self.tmp.name,
                              env=self.env, capture_output=True, text=True, check=False)
        self.assertIn("No module named 'pipetwin'", gone.stderr)
        again = self.pip("install", "--no-build-isolation", "--no-index", "--no-cache-dir",
                         os.path.join(SOURCE, "python"))
        self.assertEqual(again.returncode, 0, again.stdout + again.stderr)

    def test_a_build_dir_that_is_not_one_is_named(self):
        bad = self.pip("install", "--no-build-isolation", "--no-index", "--no-cache-dir",
                       os.path.join(SOURCE, "python"), build_dir=self.tmp.name)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("PIPETWIN_BUILD_DIR=" + self.tmp.name + ": not a configured CMake build "
                      "folder", bad.stdout + bad.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
