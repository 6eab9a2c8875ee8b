# dataset 1.5.2: Database.query(sql, **params) -> dataset/database.py line 317 (self.executable.execute(query, *args, **kwargs))
import _shim
_shim.shim()
db, tb = _shim.people()
print(list(db.query("SELECT * FROM people WHERE age > :a", a=0)))
print("OK")
