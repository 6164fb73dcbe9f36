# expect: FM06
# options: {}
# why: trains on train.csv and predicts an unlabelled test.csv with no validation at all
import pandas as pd
from sklearn.ensemble import GradientBoostingRegressor

train = pd.read_csv("train.csv")
test = pd.read_csv("test.csv")

features = ["LotArea", "OverallQual", "YearBuilt", "GrLivArea", "GarageCars"]
X = train[features]
y = train["SalePrice"]
model = GradientBoostingRegressor(n_estimators=400, learning_rate=0.05)
model.fit(X, y)

preds = model.predict(test[features])
submission = pd.DataFrame({"Id": test["Id"], "SalePrice": preds})
submission.to_csv("submission.csv", index=False)
print("wrote", len(submission), "predictions")
