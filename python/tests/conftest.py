"""Fixtures shared by the Python tests."""
import pytest

import apptracer
from bundled import VECTOR_ADD


@pytest.fixture
def t():
    """The bundled vector_add trace, open."""
    with apptracer.open(VECTOR_ADD) as trace:
        yield trace
