# mir_eval 0.7 separation._safe_db with a zero-energy error term (a perfect estimate), line 833
import mir_eval.separation as sep

print(sep._safe_db(1.0, 0.0))
print("OK")
