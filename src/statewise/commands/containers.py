"""Which words of a container tool's command can name files on this machine.

``docker volume rm data`` names a volume, ``docker rm web`` a container, ``docker rmi app`` an
image: object names live in the container engine, not in the working directory, so a protected
path that happens to share the name (``data/``) is not what the command touches. A bind mount
(``-v ./data:/x``, ``--mount type=bind,source=./data``), a build context, a Compose or Docker
file, an ``--env-file`` or the archive ``save -o`` / ``load -i`` names are files here.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Programs whose command line this module reads (docker's CLI shape).
CONTAINER_PROGRAMS = frozenset({"docker", "podman", "nerdctl"})
#: Object groups: the verb follows (`docker volume rm`, `podman network inspect`).
_GROUPS = frozenset({"volume", "network", "image", "container", "context", "plugin", "secret", "config", "node",
                     "service", "stack", "pod", "machine", "system", "builder", "manifest", "trust"})
#: Verbs whose operands are object names (containers, images, volumes, networks ...) or nothing.
_OBJECT_VERBS = frozenset({"rm", "rmi", "remove", "stop", "start", "restart", "kill", "pause", "unpause", "logs",
                           "inspect", "top", "port", "stats", "wait", "rename", "tag", "pull", "push", "history",
                           "prune", "ls", "list", "ps", "connect", "disconnect", "update", "diff", "events",
                           "info", "version", "images", "search", "login", "logout", "use", "exists"})
#: Options whose value is a file on this machine (long forms only: `-f` is `--force` for `rm`,
#: `-i` is `--interactive` for `start`).
_FILE_OPTIONS = frozenset({"--output", "--input", "--env-file", "--label-file", "--cidfile", "--iidfile"})
#: Global options that take a value in the next word (so it is not read as the verb).
_GLOBAL_VALUED = frozenset({"-H", "--host", "--context", "-c", "--config", "-l", "--log-level", "--tlscacert",
                            "--tlscert", "--tlskey", "--connection", "--url", "--root", "--runroot",
                            "--storage-driver", "--namespace", "-n", "--address", "-a"})


def container_path_words(args: Sequence[str]) -> list[str]:
    """The words of a docker/podman/nerdctl command (``args``: after the program, quotes
    removed) that can name a path on this machine. For a verb whose operands are object names
    (``rm``, ``rmi``, ``volume rm``, ``network inspect`` ...), only the values of file options;
    otherwise every word, with the host side of each bind mount added as a word of its own."""
    positionals: list[str] = []
    files: list[str] = []
    mounts: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        name, equals, attached = word.partition("=")
        value = attached if equals else (args[i + 1] if i + 1 < len(args) else "")
        if word.startswith("-") and word != "-":
            if name in _FILE_OPTIONS:
                files.append(value)
            elif name in ("-v", "--volume", "--mount"):
                mounts.append(value)
            verb_known = len(positionals) >= 2 or (positionals and positionals[0] not in _GROUPS)
            if not equals and not verb_known and name in _GLOBAL_VALUED:
                i += 1
        else:
            positionals.append(word)
        i += 1
    verb = positionals[1] if len(positionals) > 1 and positionals[0] in _GROUPS else (
        positionals[0] if positionals else "")
    if verb in _OBJECT_VERBS:
        return [f for f in files if f]
    return [*args, *(source for mount in mounts if (source := _bind_source(mount)))]


def _bind_source(mount: str) -> str | None:
    """The host path of a bind mount (``./data:/x:ro``, ``type=bind,source=./data,...``), or
    None for a named volume (``cache:/root/.cache``) or a mount of another type."""
    if "=" in mount and ("source=" in mount or "src=" in mount):
        fields = dict(part.partition("=")[::2] for part in mount.split(","))
        if fields.get("type", "volume") != "bind":
            return None
        return fields.get("source") or fields.get("src") or None
    source = mount.split(":", 1)[0]
    return source if source.startswith(("/", ".", "~")) else None
