"""``infra.identity.ancestry``: chains walked on real rows, remembered only once complete."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.orm import Session

from infra.clock import new_id
from infra.db.models.organizations import Organization
from infra.identity.ancestry import organization_chain
from tests.support.sqlite import sqlite_session


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    with sqlite_session(tmp_path / "ancestry.db") as session:
        yield session


def _org(session: Session, parent_id: str | None = None) -> str:
    org = Organization(name="org", root_quorum_threshold=1, parent_id=parent_id)
    session.add(org)
    session.flush()
    return org.id


class Statements:
    """Counts the statements the session really sends."""

    def __init__(self, session: Session) -> None:
        self.count = 0

        def _before(*_args: Any) -> None:
            self.count += 1

        event.listen(session.get_bind(), "before_cursor_execute", _before)


def test_a_sub_organization_chain_reaches_the_root(session: Session) -> None:
    root = _org(session)
    sub = _org(session, root)
    assert organization_chain(session, sub) == [sub, root]
    assert organization_chain(session, root) == [root]


def test_a_complete_chain_is_read_once(session: Session) -> None:
    root = _org(session)
    sub = _org(session, root)
    organization_chain(session, sub)
    sent = Statements(session)
    assert organization_chain(session, sub) == [sub, root]
    assert sent.count == 0


def test_an_unknown_organization_has_no_chain_and_is_not_remembered(session: Session) -> None:
    org_id = new_id()
    assert organization_chain(session, org_id) == []
    session.add(Organization(id=org_id, name="late", root_quorum_threshold=1))
    session.flush()
    assert organization_chain(session, org_id) == [org_id]
