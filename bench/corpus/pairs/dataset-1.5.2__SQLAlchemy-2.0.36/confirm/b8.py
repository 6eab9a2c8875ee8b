# dataset 1.5.2: Table.find(...) -> dataset/table.py line 628 (self.table.select(whereclause=, limit=, offset=))
import _shim
_shim.shim()
db, tb = _shim.people()
db.executable.execute(tb.table.insert(), [dict(name="b", age=4), dict(name="c", age=5)])
print(list(tb.find(age={'>': 3})))
print("OK")
