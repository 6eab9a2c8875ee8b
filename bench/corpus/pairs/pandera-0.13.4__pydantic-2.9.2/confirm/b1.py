import warnings; warnings.simplefilter("ignore")
import pandas as pd, pydantic
import pandera as pa
from pandera.typing import DataFrame, Series
class Schema(pa.SchemaModel):
    a: Series[int] = pa.Field(ge=0)
    b: Series[str]
df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
# a pydantic model with a pandera DataFrame[Schema] field: pydantic calls pandera's __get_validators__ hook
# DataFrame.pydantic_validate(obj, field) (typing/pandas.py line 175) -> _get_schema line 157 (field.sub_fields)
class M(pydantic.BaseModel):
    df: DataFrame[Schema]
print(M(df=df).df.shape)
print("OK")
