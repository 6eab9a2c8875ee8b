# dataset 1.5.2: Table.create_column -> _sync_table -> _reflect_table -> dataset/table.py lines 305-306 (Table(..., autoload=True))
import _shim, dataset
if _shim.V2:
    _shim.dbm.MetaData = lambda schema=None, bind=None: _shim.MetaData(schema=schema)   # past b1 only
db = dataset.connect("sqlite:///:memory:")
tb = db.create_table("people")
tb.create_column("name", db.types.text)
print(tb.columns)
print("OK")
