"""What pyproject.toml cannot say: errkit-hook.pth goes into site-packages itself, beside the
package, so that `ERRKIT_EXPLAIN=1 python script.py` explains an uncaught error of a script one
cannot edit (errkit/integrations/excepthook.py). Python runs the file's one line at start-up; with the variable
unset it costs a dictionary lookup.

A wheel gets it from build_py. An editable install (`pip install -e .`) builds no package files, so
the editable wheel gets it beside its own .pth files: setuptools writes what lies at the top of the
unpacked editable wheel into site-packages (its namespace .pth files go the same way). That step is
setuptools' `editable_wheel._run_build_commands`, the same from 64 to 84 (pyproject.toml pins the
range); tests/integrations/test_hooks.py installs both ways and turns the hook on."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

HOOK = Path("errkit") / "integrations" / "errkit-hook.pth"


class BuildPyWithHook(build_py):
    def run(self):
        super().run()
        self.copy_file(str(HOOK), str(Path(self.build_lib) / HOOK.name))

    def get_outputs(self, include_bytecode=True):
        return [*super().get_outputs(include_bytecode), str(Path(self.build_lib) / HOOK.name)]


class EditableWheelWithHook(editable_wheel):
    def _run_build_commands(self, dist_name, unpacked_wheel, build_lib, tmp_dir):
        built = super()._run_build_commands(dist_name, unpacked_wheel, build_lib, tmp_dir)
        shutil.copyfile(HOOK, Path(unpacked_wheel) / HOOK.name)
        return built


setup(cmdclass={"build_py": BuildPyWithHook, "editable_wheel": EditableWheelWithHook})
