"""Agent recipes: what `streamscope record -- AGENT ...` adds for a coding agent, one
record each.

Every recorded command gets each provider side's base-URL variables (providers.py). An
agent that does not read them (codex-cli reads `openai_base_url` from its config, never
`OPENAI_BASE_URL`) is given what it does read, for that run only: variables added to its
environment and arguments inserted right after its program name, each `{base_url}`
replaced by the proxy's base URL of the recipe's side and each `{files}` by the folder of
the files streamscope ships for agents (agent_files/: pi's extension); or, where only a
config file will do, a config dir of the run's own (`prepare`: made in a private temporary
folder, removed when the run ends, the variable that names it added). Nothing is written
to the user's own config files. An agent is known by its program's name (`codex`,
`/usr/bin/codex`) or, run through an npm launcher (`npx @openai/codex ...`), by its
package's.

Adding an agent is a record in RECIPES (and a section in docs/recording-agents.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from .core.record import record
from .text import say

# Launchers that run an npm package's program: `npx [options] PACKAGE[@version] ARGS`.
LAUNCHERS = frozenset({"npx", "bunx", "pnpx"})
# Files an agent is pointed at (not written: they ship with streamscope).
FILES = Path(__file__).resolve().parent / "agent_files"


@record(frozen=True, slots=True)
class Recipe:
    """What one agent is given under `record`."""

    name: str  # how streamscope says it: "codex"
    title: str  # "Codex CLI"
    programs: tuple[str, ...]  # its program's file names: ("codex",)
    packages: tuple[str, ...] = ()  # its npm packages, for `npx PACKAGE`
    side: str = "openai"  # the proxy side (providers.py) whose base URL it is given
    args: tuple[str, ...] = ()  # inserted after the program name; placeholders replaced
    env: tuple[tuple[str, str], ...] = ()  # variables set; placeholders replaced
    why: str = ""  # why it needs them, in a clause
    # its subcommands that ask no model (`pi install`): run as given, as they read the
    # recipe's arguments as a prompt where a subcommand was expected
    plain: tuple[str, ...] = ()
    # A config dir of the run's own: (the environment, an empty private folder removed
    # after the run) -> the variables to add ({}: nothing needed for this user).
    prepare: Callable[[Mapping[str, str], Path], dict[str, str]] | None = None

    def arguments(self, base_url: str) -> list[str]:
        return [_fill(a, base_url) for a in self.args]

    def variables(self, base_url: str) -> dict[str, str]:
        return {name: _fill(value, base_url) for name, value in self.env}


def _fill(template: str, base_url: str) -> str:
    return template.replace("{base_url}", base_url).replace("{files}", str(FILES))


# -- the Gemini CLI's auth type -----------------------------------------------------------

# gemini-cli (0.61) takes its auth type from its settings' `security.auth.selectedType`,
# else from the environment, where GOOGLE_GEMINI_BASE_URL (which every recorded command
# gets) picks its "gateway" type before GEMINI_API_KEY's "gemini-api-key"; its headless
# mode (`-p`) then refuses to run: "Invalid auth method selected." Where the user's
# settings select none, the run gets a GEMINI_CLI_HOME of its own whose `.gemini` holds
# the user's every entry (linked: what gemini writes there lands where it always does)
# but settings.json, a copy of the user's with the type gemini would have picked without
# that variable. GOOGLE_GENAI_USE_GCA / GOOGLE_GENAI_USE_VERTEXAI come before it, and a
# type the settings select wins over all: those runs need nothing.
_GEMINI_ENV_TYPES = ("GOOGLE_GENAI_USE_GCA", "GOOGLE_GENAI_USE_VERTEXAI")
_GEMINI_ADC = ("CLOUD_SHELL", "GEMINI_CLI_USE_COMPUTE_ADC")


def _gemini_settings(path: Path) -> dict | None:
    """The settings file's object ({}: none there; None: one this cannot read, kept as it
    is: gemini reads JSON with comments, this does not)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError):
        return None
    try:
        settings = json.loads(text)
    except ValueError:
        return None
    return settings if isinstance(settings, dict) else None


def gemini_home(environ: Mapping[str, str], work: Path) -> dict[str, str]:
    """The Gemini CLI's GEMINI_CLI_HOME for one recorded run, where it needs one (above)."""
    if any(environ.get(name) == "true" for name in _GEMINI_ENV_TYPES):
        return {}
    home = Path(environ.get("GEMINI_CLI_HOME") or environ.get("HOME") or Path.home())
    own = home / ".gemini"
    settings = _gemini_settings(own / "settings.json")
    if settings is None:
        return {}
    security = settings.get("security")
    auth = security.get("auth") if isinstance(security, dict) else None
    if isinstance(auth, dict) and auth.get("selectedType"):
        return {}
    chosen = "gemini-api-key"
    if any(environ.get(name) == "true" for name in _GEMINI_ADC):
        chosen = "compute-default-credentials"
    given = work / ".gemini"
    given.mkdir(mode=0o700)
    if own.is_dir():
        for entry in own.iterdir():
            if entry.name != "settings.json":
                (given / entry.name).symlink_to(entry)
    if (home / ".env").exists():  # gemini reads ~/.env from its home too
        (work / ".env").symlink_to(home / ".env")
    security = dict(security) if isinstance(security, dict) else {}
    security["auth"] = {**(auth if isinstance(auth, dict) else {}), "selectedType": chosen}
    (given / "settings.json").write_text(json.dumps({**settings, "security": security}, indent=2))
    return {"GEMINI_CLI_HOME": str(work)}


RECIPES: tuple[Recipe, ...] = (
    # codex-cli ignores OPENAI_BASE_URL: its built-in `openai` provider takes its base URL
    # from the `openai_base_url` config key, and `-c` sets a key for one run. The provider
    # stays the built-in one (its auth, its WebSocket transport), only its URL moves.
    Recipe(
        "codex",
        "Codex CLI",
        ("codex",),
        ("@openai/codex",),
        args=("-c", 'openai_base_url="{base_url}"'),
        why="it reads no OPENAI_BASE_URL",
    ),
    # opencode's providers are the AI SDK's: its OpenAI one reads OPENAI_BASE_URL as every
    # command gets it, but its Anthropic one appends `/messages` to ANTHROPIC_BASE_URL (the
    # SDK's base ends in /v1, Anthropic's own SDKs' does not): it is given the side's URL
    # with the /v1. A baseURL in the user's opencode.json still wins over both.
    Recipe(
        "opencode",
        "opencode",
        ("opencode",),
        ("opencode-ai",),
        side="anthropic",
        env=(("ANTHROPIC_BASE_URL", "{base_url}/v1"),),
        why="its Anthropic provider reads ANTHROPIC_BASE_URL with /v1 in it",
    ),
    # pi passes each model's base URL from its own model list to the SDKs, so no variable
    # reaches them; its `-e` extension (agent_files/pi-base-urls.js, loaded for this run
    # only) points its built-in openai and anthropic providers at OPENAI_BASE_URL and
    # ANTHROPIC_BASE_URL, as pi's registerProvider overrides a provider's baseUrl.
    Recipe(
        "pi",
        "pi",
        ("pi",),
        ("@mariozechner/pi-coding-agent",),
        args=("-e", "{files}/pi-base-urls.js"),
        why="its providers read no base-URL variable: this extension gives them "
        "OPENAI_BASE_URL and ANTHROPIC_BASE_URL",
        plain=("install", "remove", "uninstall", "update", "list", "config"),
    ),
    Recipe(
        "gemini",
        "Gemini CLI",
        ("gemini",),
        ("@google/gemini-cli",),
        side="gemini",
        prepare=gemini_home,
        why=(
            "its settings select no auth type, and with GOOGLE_GEMINI_BASE_URL set "
            "gemini -p would refuse to run"
        ),
    ),
)


@record(frozen=True, slots=True)
class Applied:
    """A recipe applied to a command: the command to run and the variables to add."""

    recipe: Recipe
    command: list[str]
    env: dict[str, str]
    inserted: list[str]  # the arguments it inserted


def _package_name(spec: str) -> str:
    """`@openai/codex@0.171.0` -> `@openai/codex`; `cowsay@1` -> `cowsay`."""
    at = spec.find("@", 1)
    return spec if at < 0 else spec[:at]


def _program_end(command: list[str]) -> tuple[Recipe, int] | None:
    """The recipe for `command` and the index just after its program's name (or its npm
    package's, behind a launcher); None when no recipe knows it."""
    if not command:
        return None
    program = os.path.basename(command[0])
    for recipe in RECIPES:
        if program in recipe.programs:
            return recipe, 1
    if program in LAUNCHERS:
        for i, word in enumerate(command[1:], 1):
            if word.startswith("-"):
                continue  # the launcher's own options (`-y`)
            name = _package_name(word)
            return next(((r, i + 1) for r in RECIPES if name in r.packages), None)
    return None


def recipe_for(command: list[str]) -> Recipe | None:
    """The recipe of the agent `command` runs, None if it is no agent a recipe knows."""
    found = _program_end(command)
    return found[0] if found else None


def apply(command: list[str], base_urls: dict[str, str]) -> Applied | None:
    """`command` with its agent's recipe applied (`base_urls`: the proxy's base URL of
    each side, by name); None when no recipe knows it (the command runs as given)."""
    found = _program_end(command)
    if found is None:
        return None
    recipe, at = found
    if command[at : at + 1] and command[at] in recipe.plain:
        return None
    base_url = base_urls.get(recipe.side, "")
    inserted = recipe.arguments(base_url)
    return Applied(
        recipe, [*command[:at], *inserted, *command[at:]], recipe.variables(base_url), inserted
    )


@contextlib.contextmanager
def prepared(applied: Applied | None, environ: Mapping[str, str]) -> Iterator[dict[str, str]]:
    """The variables the recipe's `prepare` adds for one run, its folder (private, in the
    temporary directory) removed when the run ends; {} for a recipe without one."""
    if applied is None or applied.recipe.prepare is None:
        yield {}
        return
    work = Path(tempfile.mkdtemp(prefix=f"streamscope-{applied.recipe.name}-"))
    try:
        try:
            own = applied.recipe.prepare(environ, work)
        except OSError as e:  # the run goes on as it would without
            say(f"cannot make {applied.recipe.name}'s config dir in {work}: {e.strerror or e}")
            own = {}
        yield own
    finally:
        # (links are removed, never followed: the user's own files stay)
        shutil.rmtree(work, ignore_errors=True)
