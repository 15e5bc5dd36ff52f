"""What pyproject.toml cannot say: errkit-hook.pth goes into site-packages itself, beside the
package, so that `ERRKIT_EXPLAIN=1 python script.py` explains an uncaught error of a script one
cannot edit (errkit/integrations/excepthook.py). Python runs the file's one line at start-up; with the variable
unset it costs a dictionary lookup."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HOOK = "errkit-hook.pth"


class BuildPyWithHook(build_py):
    def run(self):
        super().run()
        self.copy_file(str(Path("errkit") / "integrations" / HOOK), str(Path(self.build_lib) / HOOK))

    def get_outputs(self, include_bytecode=True):
        return [*super().get_outputs(include_bytecode), str(Path(self.build_lib) / HOOK)]


setup(cmdclass={"build_py": BuildPyWithHook})
