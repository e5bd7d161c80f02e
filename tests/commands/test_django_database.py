"""``manage.py migrate`` reads where the project's settings put the database (issue 22, real
traffic), through the installed hook.

A migration runs at once only against a database known not to be production. The developer's
``database.environment`` record says so; so do the project's own settings when every database
they declare is on this machine: a SQLite file, or a server at localhost. A remote host, a
value computed when the settings load (an environment variable), a ``*`` import that may
replace ``DATABASES``, or settings that cannot be found are no evidence: the developer is
asked, as before. A settings module named for production is still denied.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from statewise.commands.projects import django_databases_local
from tests.integrations.installed import Project, make_project

MANAGE = "import os\nimport sys\nos.environ.setdefault('DJANGO_SETTINGS_MODULE', 'site_app.settings')\n"
SQLITE = "DATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': 'db.sqlite3'}}\n"
LOCAL_POSTGRES = ("DATABASES = {'default': {'ENGINE': 'django.db.backends.postgresql', 'NAME': 'app', "
                  "'HOST': 'localhost'}, 'cache': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': ':memory:'}}\n")
REMOTE = "DATABASES = {'default': {'ENGINE': 'django.db.backends.postgresql', 'HOST': 'db.internal.example'}}\n"
FROM_ENV = ("import os\nDATABASES = {'default': {'ENGINE': 'django.db.backends.postgresql', "
            "'HOST': os.environ['DB_HOST']}}\n")
STAR = SQLITE + "from .local import *\n"
CHANGED = SQLITE + "DATABASES['default']['HOST'] = 'db.internal.example'\n"


def _django(folder: Path, settings: str, name: str = "site_app") -> None:
    (folder / name).mkdir(parents=True, exist_ok=True)
    (folder / "manage.py").write_text(MANAGE.replace("site_app", name))
    (folder / name / "__init__.py").write_text("")
    (folder / name / "settings.py").write_text(settings)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    made = make_project(tmp_path_factory.mktemp("django-db"), protected=[".env"])
    for folder, settings in (("sqlite", SQLITE), ("local", LOCAL_POSTGRES), ("remote", REMOTE),
                             ("from_env", FROM_ENV), ("star", STAR), ("changed", CHANGED)):
        _django(made.work / folder, settings)
    (made.work / "nosettings").mkdir()
    (made.work / "nosettings" / "manage.py").write_text(MANAGE)
    return made


@pytest.mark.parametrize("command", [
    "cd sqlite && rm -f db.sqlite3 && python3 manage.py migrate",
    "cd sqlite && python3 manage.py migrate app zero",
    "cd local && python manage.py migrate",
    "cd sqlite && python3 manage.py migrate --settings=site_app.settings",
    "cd sqlite && DJANGO_SETTINGS_MODULE=site_app.settings python3 manage.py migrate",
])
def test_a_migration_against_a_local_database_the_settings_show_passes(project, command):
    answer = project.bash(command)
    assert answer.decision == "defer", answer.reason


@pytest.mark.parametrize("folder", ["remote", "from_env", "star", "changed", "nosettings"])
def test_a_remote_unknown_or_changed_database_is_still_asked(project, folder):
    answer = project.bash(f"cd {folder} && python3 manage.py migrate")
    assert answer.decision == "ask", answer.reason
    assert "database.environment" in answer.reason


def test_settings_named_for_production_are_denied_even_with_sqlite(project):
    _django(project.work / "sqlite", SQLITE, name="production")
    answer = project.bash("cd sqlite && python3 manage.py migrate --settings=production.settings")
    assert answer.decision == "deny", answer.reason


def test_what_shows_the_database_local(tmp_path):
    _django(tmp_path / "a", LOCAL_POSTGRES)
    assert django_databases_local(tmp_path / "a" / "manage.py", None) == (
        "settings.py: postgresql at localhost, sqlite3")
    assert django_databases_local(tmp_path / "a" / "manage.py", "missing.settings") is None
    _django(tmp_path / "b", REMOTE)
    assert django_databases_local(tmp_path / "b" / "manage.py", None) is None
