# dataset 1.5.2: Table.insert(dict) -> dataset/table.py line 119 (self.table.insert(row))
import _shim
_shim.shim()
db, tb = _shim.people()
pass
print(tb.insert(dict(name='a', age=3)))
print("OK")
