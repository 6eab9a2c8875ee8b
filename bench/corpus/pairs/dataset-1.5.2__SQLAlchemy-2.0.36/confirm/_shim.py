# Shared by b2..b11: a sqlite file db with a `people` table. On SQLAlchemy 2 the two lines that every path crosses
# first -- dataset/database.py 109 MetaData(bind=) (b1) and dataset/table.py 305-306 Table(autoload=True) (b2) --
# are given their 2.0 spelling here, so each later line runs as written. On 1.4 nothing is changed.
import os, tempfile
import sqlalchemy
import dataset, dataset.database as dbm, dataset.table as dtm
from sqlalchemy.schema import MetaData
V2 = int(sqlalchemy.__version__.split(".")[0]) >= 2
_engines = []
def shim():
    if not V2:
        return
    dbm.MetaData = lambda schema=None, bind=None: MetaData(schema=schema)
    _T = dtm.SQLATable
    def _table(name, md, *a, autoload=False, **k):
        if autoload:
            k["autoload_with"] = _engines[-1]
        return _T(name, md, *a, **k)
    dtm.SQLATable = _table
def people(rows=True):
    url = "sqlite:///" + os.path.join(tempfile.mkdtemp(), "d.db")
    db = dataset.connect(url); _engines.append(db.engine)
    tb = db.create_table("people")
    tb.create_column("name", db.types.text); tb.create_column("age", db.types.integer)
    return db, tb
