from tests.support.wheels import seed_venv, wheels  # noqa: F401
