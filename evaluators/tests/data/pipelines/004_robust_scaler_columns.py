# expect: FM08
# options: {}
# why: RobustScaler fitted on the numeric columns of the whole frame, frame split afterwards
import pandas as pd
from sklearn.preprocessing import RobustScaler
from sklearn.model_selection import train_test_split
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score

df = pd.read_csv("energy.csv")
num_cols = ["temperature", "humidity", "wind_speed", "pressure"]

scaler = RobustScaler()
scaler.fit(df[num_cols])
df[num_cols] = scaler.transform(df[num_cols])

X = df.drop(columns=["consumption"])
y = df["consumption"]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=7)

ridge = Ridge(alpha=1.0)
ridge.fit(X_train, y_train)
print("R2:", r2_score(y_test, ridge.predict(X_test)))
