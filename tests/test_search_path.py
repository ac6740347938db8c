"""``search_path``: unqualified names resolve in ``public`` only, so a path naming another schema
is refused (0A000) instead of being accepted and ignored (issue: nothing silently wrong)."""
import pytest

import mzlite


@pytest.mark.parametrize("value", ["public", '"$user", public', "PUBLIC", "public, pg_catalog", "DEFAULT"])
def test_public_and_system_schemas_are_accepted(con, value):
    con.execute(f"SET search_path = {value}")
    shown = con.execute("SHOW search_path").fetchall()[0][0]
    assert "public" in shown


@pytest.mark.parametrize("value", ["analytics", "public, analytics", '"Analytics"'])
def test_another_schema_is_refused_and_the_path_is_unchanged(con, value):
    """Sabotage: give search_path ``_parse_text`` again (mzlite/session.py) -> the SET succeeds
    and unqualified names would still resolve in public."""
    con.execute("CREATE SCHEMA analytics")
    con.execute("CREATE TABLE analytics.t (a int)")
    con.execute("CREATE TABLE t (b int)")
    with pytest.raises(mzlite.NotSupportedError) as exc:
        con.execute(f"SET search_path = {value}")
    assert exc.value.sqlstate == "0A000"
    assert "unqualified names resolve" in str(exc.value)
    assert con.execute("SHOW search_path").fetchall() == [("public",)]
    assert [d[0] for d in con.execute("SELECT * FROM t").description] == ["b"]
