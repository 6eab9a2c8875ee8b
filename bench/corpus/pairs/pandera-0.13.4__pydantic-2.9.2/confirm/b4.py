# a pydantic model with a DataFrameSchema field: DataFrameSchema.__get_validators__ (schemas.py line 1715)
# yields _pydantic_validate(cls, schema) (line 1719), which pydantic now calls with an extra argument
import warnings; warnings.simplefilter("ignore")
import pydantic, pandera as pa
class M(pydantic.BaseModel):
    s: pa.DataFrameSchema
    class Config:
        arbitrary_types_allowed = True
print(list(M(s=pa.DataFrameSchema({"a": pa.Column(int)})).s.columns))
print("OK")
