"""Shell commands as an agent writes them, reduced to the command whose exit status the run
reports: `cd dir && ENV=1 timeout 60 npx jest --ci 2>&1 | tail -50` is `jest --ci`. Lessons key
runs by what is left (flags and variables aside), so the failing run and the passing run of the
same command match however each was wrapped, and a changed flag or variable can be named as
the fix."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass

#: Programs that only prepare the shell for the command after them.
_SETUP = {"cd", "pushd", "popd", "source", ".", "export", "set", "unset", "sleep", "kill", "pkill",
          "echo", "printf", "true", "rm", "mkdir", "wait", "clear", "ulimit", "trap", "alias", "#"}
#: Wrappers whose last arguments are the real command.
_PREFIX = {"env", "time", "nohup", "sudo", "exec", "command", "nice", "stdbuf", "xvfb-run",
           "npx", "bunx", "pnpx", "dotenv"}
_PREFIX_PAIRS = {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run"),
                 ("bundle", "exec"), ("pnpm", "exec"), ("pnpm", "dlx"), ("yarn", "dlx"), ("rye", "run"),
                 ("conda", "run")}
_SHELLS = {"bash", "sh", "zsh", "dash"}
#: Filters a command's output is piped into; the status a run reports is theirs.
FILTERS = {"tail", "head", "grep", "egrep", "rg", "tee", "less", "more", "cat", "sed", "awk", "cut", "sort",
           "uniq", "wc", "tr", "column", "jq", "ts"}
#: Commands that only look around: their failures teach nothing.
_TRIVIAL = {"ls", "cat", "head", "tail", "grep", "egrep", "rg", "find", "fd", "which", "type", "pwd", "echo",
            "sed", "awk", "wc", "tree", "file", "stat", "du", "df", "ps", "lsof", "top", "nvidia-smi", "curl",
            "wget", "ping", "sleep", "kill", "pkill", "diff", "less", "env", "printenv", "whoami", "date",
            "cp", "mv", "rm", "mkdir", "touch", "chmod", "ln", "open", "true", "false", "test", "[", "jq",
            "sort", "uname", "hostname", "history", "man", "printf", "gh"}
_TRIVIAL_GIT = {"status", "log", "diff", "show", "add", "branch", "checkout", "switch", "stash", "fetch",
                "pull", "push", "remote", "rev-parse", "ls-files", "restore", "reset", "config", "init",
                "clone", "tag", "blame", "grep", "worktree", "merge-base", "describe", "mv", "rm"}
_INSTALL = re.compile(
    r"^(?:(?:npm|pnpm|yarn|bun|cnpm) (?:install|i|ci|add|update|upgrade|remove|uninstall|rm)\b"
    r"|(?:pip3?|python3? -m pip|uv pip|pipx) (?:install|uninstall)\b|uv (?:add|sync|lock|remove)\b"
    r"|poetry (?:add|install|update|lock|remove)\b|pipenv (?:install|update)\b|pdm (?:add|install|update)\b"
    r"|conda (?:install|update)\b|mamba install\b|cargo (?:add|update|install)\b"
    r"|go (?:get|mod (?:tidy|download))\b"
    r"|bundle (?:install|update|add)\b|gem install\b|composer (?:require|install|update)\b"
    r"|mix deps\.(?:get|update)\b|dotnet add\b|(?:apt|apt-get|brew|apk|dnf|yum) install\b)")
_FAMILIES = {
    **dict.fromkeys(("npm", "pnpm", "yarn", "bun", "npx", "node", "next", "tsc", "jest", "vitest",
                     "vite", "eslint", "hardhat", "webpack", "playwright", "mocha", "tsx",
                     "ts-node", "prettier", "nx", "turbo", "expo", "react-scripts", "ng", "astro",
                     "nuxt", "svelte-kit", "cnpm", "deno"), "node"),
    **dict.fromkeys(("pip", "pip3", "uv", "poetry", "pipenv", "pdm", "conda", "mamba", "python",
                     "pytest", "mypy", "ruff", "tox", "nox", "pyright", "hatch", "flake8", "black",
                     "django-admin", "alembic", "uvicorn"), "python"),
    **dict.fromkeys(("cargo", "rustc"), "rust"), "go": "go", "mix": "elixir",
    **dict.fromkeys(("bundle", "gem", "rake", "rails", "rspec", "ruby"), "ruby"),
    **dict.fromkeys(("composer", "php", "phpunit", "artisan"), "php"), "dotnet": "dotnet",
}
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
_CODE_MODE = re.compile(r'exec_command\(\s*\{\s*"cmd"\s*:\s*("(?:[^"\\\\]|\\\\.)*")')
_BACKGROUND = "\0&"
#: A shell word (quoted parts included) or an operator; a stray quote is a word of its own.
_TOKEN = re.compile(r"""[ \t\r]*(?:(&&|\|\||;;|>>|>&|&>|<<<|<<|[;&|<>()\n])"""
                    r"""|((?:[^\s;&|<>()'"\\]|\\.|'[^']*'|"(?:[^"\\]|\\.)*")+|['"\\]))""")
_QUOTED = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)""")
_LOGS = re.compile(r"\.(?:log|out|err|txt|pid|tmp)$|^/dev/")
_ASSIGN = re.compile(r"^[A-Za-z_]\w*=")
_INTERPRETER = re.compile(r"^(python|node|ruby|perl|php|deno|bun)\d*(?:\.\d+)?$")


@dataclass(frozen=True)
class Command:
    """What a shell command line comes to: the `core` that decides its exit status, the words
    that key it (`key`), its flags and variables (`options`), the setup run before it in the
    same line (`before`), and whether a pipe into a filter hides its status (`piped`)."""

    core: str
    key: str
    options: frozenset[str]
    before: tuple[str, ...]
    piped: bool
    writes: tuple[str, ...]
    background: bool = False  # started with `&`: its status says only that it started


@functools.lru_cache(maxsize=1024)
def parse(command: str) -> Command:
    """The command `command` comes to, its wrappers stripped."""
    inner = _CODE_MODE.findall(command)
    if inner:  # a script that calls the shell tool (`tools.exec_command({"cmd": …})`)
        try:
            command = json.loads(inner[-1])
        except ValueError:
            pass
    text, heredoc = _drop_heredocs(command)
    segments = _segments(text)
    writes = tuple(w for seg in segments for w in _redirect_targets(seg))
    cores: list[tuple[list[str], list[str], bool]] = []
    background = False
    for seg in segments:
        words, options, piped = _core_words([w for w in seg if w != _BACKGROUND])
        if words:
            cores.append((words, options, piped))
            background = seg[-1] == _BACKGROUND
    if not cores:
        return Command("", "", frozenset(), (), False, writes if heredoc else ())
    words, options, piped = cores[-1]
    before = tuple(" ".join(w) for w, _, _ in cores[:-1])
    key = " ".join(w for w in words if not w.startswith("-") and not re.search(r"\s", w) and len(w) <= 80)
    return Command(" ".join(words), key, frozenset(options), before, piped, writes, background)


def is_install(command: Command) -> bool:
    """Whether the command changes the project's dependencies (`npm install x@2`, `uv pip install
    -e .`, `poetry add`…)."""
    return bool(_INSTALL.match(command.core)) or any(_INSTALL.match(b) for b in command.before)


def family(command: Command) -> str:
    """The ecosystem a command belongs to (node, python, rust…), or "" when it is not known."""
    words = command.core.split()
    return _FAMILIES.get(words[0], "") if words else ""


#: Linters: what they report is a style rule the tool names (and often fixes) itself.
_LINTERS = {"flake8", "pylint", "eslint", "oxlint", "biome", "stylelint", "rubocop", "standardrb",
            "golangci-lint", "shellcheck", "markdownlint", "markdownlint-cli2", "hadolint", "yamllint",
            "codespell", "ktlint", "swiftlint", "credo"}
_LINT_SCRIPTS = re.compile(r"^(?:npm|pnpm|yarn|bun)(?: run)? lint(?::\S*)?$|^make lint$|^ruff(?: check)?\b"
                           r"|^mix credo\b|^cargo clippy\b")


def is_lint(command: Command) -> bool:
    """Whether the command is a linter's run (`ruff check`, `eslint .`, `npm run lint`…)."""
    words = command.core.split()
    return bool(words) and (words[0] in _LINTERS or bool(_LINT_SCRIPTS.match(command.key)))


def is_trivial(command: Command) -> bool:
    """Whether the command only looks around, moves files or reaches the network."""
    words = command.core.split()
    if not words:
        return True
    if words[0] == "git":
        return len(words) < 2 or words[1] in _TRIVIAL_GIT
    if _INTERPRETER.match(words[0]) and len(words) > 1 and words[1] in {"-c", "-e", "--eval", "-p"}:
        return True  # an inline probe (`python -c "import x; print(x.__version__)"`)
    return words[0] in _TRIVIAL


def _drop_heredocs(command: str) -> tuple[str, bool]:
    """The command without the bodies of its here-documents (they are data, not commands)."""
    lines = command.split("\n")
    out: list[str] = []
    ending = ""
    found = False
    for line in lines:
        if ending:
            if line.strip() == ending:
                ending = ""
            continue
        out.append(line)
        match = _HEREDOC.search(line)
        if match:
            ending, found = match.group(2), True
    return "\n".join(out), found


def _segments(text: str) -> list[list[str]]:
    """The command line's simple commands, each a list of words (quotes removed), with `|`,
    redirections and a trailing `&` kept as words."""
    segments: list[list[str]] = [[]]
    for match in _TOKEN.finditer(text.replace("\\\n", " ")):
        operator, word = match.group(1), match.group(2)
        if word is not None:
            segments[-1].append(_unquote(word))
        elif operator == "&":
            segments[-1].append(_BACKGROUND)
            segments.append([])
        elif operator in {"&&", "||", ";", "\n", ";;"}:
            segments.append([])
        elif operator:
            segments[-1].append(operator)
    return [s for s in segments if s and s[0] not in {"#", _BACKGROUND} and not s[0].startswith("#")]


def _unquote(word: str) -> str:
    return _QUOTED.sub(lambda m: m.group(1) if m.group(1) is not None else
                       re.sub(r"\\(.)", r"\1", m.group(2)) if m.group(2) is not None else m.group(3), word)


def _redirect_targets(words: list[str]) -> list[str]:
    out = []
    for i, word in enumerate(words[:-1]):
        if word in {">", ">>"} and (i == 0 or words[i - 1] not in {"2", "&"}):
            target = words[i + 1]
            if not target.startswith("&") and not _LOGS.search(target):
                out.append(target)
    return out


def _core_words(words: list[str]) -> tuple[list[str], list[str], bool]:
    """The words of the command a simple command runs, the flags and variables set on it, and
    whether its output is piped into a filter."""
    piped = False
    if "|" in words:
        first, rest = words[: words.index("|")], words[words.index("|") + 1:]
        piped = bool(rest) and rest[0] in FILTERS
        words = first if piped or not rest else rest
    words = _strip_redirects(words)
    options: list[str] = []
    while words:
        head = words[0]
        if _ASSIGN.match(head):
            options.append(head.split("=", 1)[0] + "=")
            words = words[1:]
        elif head in _SETUP:
            return [], [], False
        elif head == "timeout":
            words = words[1:]
            while words and (words[0].startswith("-") or re.fullmatch(r"[\d.]+[smhd]?", words[0])):
                words = words[1:]
        elif head in _PREFIX:
            words = words[1:]
            while words and words[0].startswith("-"):
                words = words[1:]
        elif len(words) > 1 and (head, words[1]) in _PREFIX_PAIRS:
            words = words[2:]
        elif head in _SHELLS or (head == "script" and any(re.fullmatch(r"-\w*c\w*", w) for w in words[1:3])):
            inner = next((w for w in words[1:] if " " in w), "")
            if not inner:
                return [], [], False
            parsed = parse(inner)
            return parsed.core.split(), sorted(parsed.options), piped or parsed.piped
        else:
            break
    if not words:
        return [], [], False
    program = words[0].rsplit("/", 1)[-1]
    program = re.sub(r"\.exe$", "", program)
    if _INTERPRETER.match(program):
        program = _INTERPRETER.match(program).group(1)  # type: ignore[union-attr]
    words = [program, *words[1:]]
    if program == "python" and len(words) > 2 and words[1] == "-m":
        words = words[2:]
    options += [w.split("=", 1)[0] for w in words if w.startswith("-")]
    return words, options, piped


def _strip_redirects(words: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for i, word in enumerate(words):
        if skip:
            skip = False
            continue
        if word in {">", ">>", "<", ">&", "<<", "<<<", "&>"}:
            if out and out[-1] in {"1", "2", "&"} and i and words[i - 1] == out[-1]:
                out.pop()
            skip = True
            continue
        out.append(word)
    return out
