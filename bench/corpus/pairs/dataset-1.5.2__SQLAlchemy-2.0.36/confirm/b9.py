# dataset 1.5.2: Table.count(...) -> dataset/table.py line 669 (select([func.count()], whereclause=))
import _shim
_shim.shim()
db, tb = _shim.people()
db.executable.execute(tb.table.insert(), [dict(name="b", age=4), dict(name="c", age=5)])
print(tb.count(age={'>': 0}))
print("OK")
