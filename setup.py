"""The one build step pyproject.toml cannot say: ``kb help TOPIC`` prints the pages of docs/,
so a wheel carries them as ``kb/help/*.md``. Git holds one copy, docs/; a source checkout
(``pip install -e .``) reads docs/ itself (``kb.help.page``)."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithHelpPages(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "kb" / "help"
        target.mkdir(parents=True, exist_ok=True)
        for page in sorted(Path(__file__).parent.joinpath("docs").glob("*.md")):
            self.copy_file(str(page), str(target / page.name))


setup(cmdclass={"build_py": BuildWithHelpPages})
