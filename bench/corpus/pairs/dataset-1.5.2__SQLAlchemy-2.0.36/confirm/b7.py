# dataset 1.5.2: Table.delete(name=...) -> dataset/table.py line 296 (self.table.delete(whereclause=))
import _shim
_shim.shim()
db, tb = _shim.people()
db.executable.execute(tb.table.insert(), [dict(name="b", age=4), dict(name="c", age=5)])
print(tb.delete(name='b'))
print("OK")
