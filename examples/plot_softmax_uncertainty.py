"""
Several classes: a softmax classifier and its uncertainty
=========================================================

:class:`~skbayes_mh.FireflySoftmaxClassifier` samples a multiclass softmax regression.
Its ``predict_proba`` averages the class probabilities over the posterior draws;
``predict_proba_draws`` keeps them per draw, so that one sees how sure the model is of its
own probabilities, not only which class wins.

On scikit-learn's iris data, with the two petal measurements (to draw the plane).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score

from skbayes_mh import FireflySoftmaxClassifier

iris = load_iris()
X, y = iris.data[:, 2:], iris.target_names[iris.target]
clf = FireflySoftmaxClassifier(random_state=0).fit(X, y)
print(f"chosen test: {clf.acceptance_.name}, proposal: {clf.proposal_.name}; largest R-hat "
      f"{clf.summary(as_frame=False)['r_hat'].max():.3f}")
print(f"5-fold accuracy: {cross_val_score(clf, X, y).mean():.3f} "
      f"(scikit-learn's LogisticRegression: "
      f"{cross_val_score(LogisticRegression(max_iter=1000), X, y).mean():.3f})")

# %%
# Over the plane: the posterior-predictive probability of the winning class (shade) and
# the classes (points). Between versicolor and virginica the probabilities fall towards a
# half.

xx, yy = np.meshgrid(np.linspace(0.5, 7.5, 120), np.linspace(-0.2, 2.8, 90))
plane = np.column_stack([xx.ravel(), yy.ravel()])
top = clf.predict_proba(plane).max(axis=1).reshape(xx.shape)

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
shade = left.contourf(xx, yy, top, levels=np.linspace(1 / 3, 1, 9), cmap="Greys_r")
fig.colorbar(shade, ax=left, label="probability of the predicted class")
for name in clf.classes_:
    left.plot(*X[y == name].T, ".", label=name)
left.set_xlabel(iris.feature_names[2])
left.set_ylabel(iris.feature_names[3])
left.legend(loc="upper left")

# %%
# For one flower on the border, each draw's probability of ``virginica``: the posterior
# spread of a probability that the mean alone would report as one number.

flower = np.array([[4.9, 1.6]])
per_draw = clf.predict_proba_draws(flower)  # (chain, draw, row, class)
column = list(clf.classes_).index("virginica")
virginica = per_draw[..., 0, column].ravel()
right.hist(virginica, bins=40)
right.axvline(clf.predict_proba(flower)[0, column], color="black", linestyle="--",
              label="posterior-predictive mean")
right.set_xlabel("P(virginica | petal 4.9 x 1.6 cm), one value per draw")
right.set_ylabel("draws")
right.legend()
fig.tight_layout()
plt.show()
print(f"P(virginica): mean {virginica.mean():.2f}, 90% interval "
      f"[{np.percentile(virginica, 5):.2f}, {np.percentile(virginica, 95):.2f}]")
