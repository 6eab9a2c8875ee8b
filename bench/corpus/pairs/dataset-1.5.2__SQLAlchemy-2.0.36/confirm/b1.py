# dataset 1.5.2: Database.metadata -> dataset/database.py line 109 (MetaData(schema=..., bind=...))
import dataset
db = dataset.connect("sqlite:///:memory:")
print(db.metadata)
print("OK")
