# dataset 1.5.2: Table.update(row, keys) -> dataset/table.py line 209 (self.table.update(whereclause=, values=))
import _shim
_shim.shim()
db, tb = _shim.people()
db.executable.execute(tb.table.insert(), [dict(name="b", age=4), dict(name="c", age=5)])
print(tb.update(dict(name='b', age=9), ['name']))
print("OK")
