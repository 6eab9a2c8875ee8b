# dataset 1.5.2: Table.insert_many(list) -> dataset/table.py line 184 (self.table.insert().execute(chunk))
import _shim
_shim.shim()
db, tb = _shim.people()
pass
print(tb.insert_many([dict(name='b', age=4), dict(name='c', age=5)]))
print("OK")
