# dataset 1.5.2: Database.begin() on a connection that already ran a statement -> dataset/database.py line 130
# (self.executable.begin(): SQLAlchemy 2 connections autobegin, so an explicit begin() after any execute raises)
import _shim
_shim.shim()
db, tb = _shim.people()
db.begin()
db.executable.execute(tb.table.insert(), [dict(name="x", age=1)])
db.commit()
print(len(tb))
print("OK")
