# dataset 1.5.2: Table.distinct('name') -> dataset/table.py line 706 (expression.select(..., whereclause=, order_by=))
import _shim
_shim.shim()
db, tb = _shim.people()
db.executable.execute(tb.table.insert(), [dict(name="b", age=4), dict(name="c", age=5)])
print(list(tb.distinct('name')))
print("OK")
