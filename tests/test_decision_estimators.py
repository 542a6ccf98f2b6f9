"""The decision wrappers pass scikit-learn's estimator checks and work in its tools."""

import numpy as np
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import make_scorer
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import parametrize_with_checks

from convexagg import (
    ConformalClassifier,
    ConvexAggregationClassifier,
    CostSensitiveClassifier,
    PriorShiftClassifier,
)
from convexagg.metrics import expected_cost_score

# A cost matrix fixes the number of classes, and scikit-learn's checks draw 2, 3 or 4
# classes: each check runs on an instance whose matrix fits its data, and fails, with
# the cost matrix's shape error, on the others (measured: check_estimator on each).
# check_classifiers_train and check_classifiers_classes use 2 and 3 classes in one
# check, so they fail on every instance; the tests of test_decision_costs.py cover them.
_CLASS_COUNT = "the check's data have another number of classes than the cost matrix"
_MISMATCHED = {
    2: {
        "check_classifiers_classes",
        "check_classifiers_train",
        "check_dict_unchanged",
        "check_dont_overwrite_parameters",
        "check_dtype_object",
        "check_estimator_sparse_array",
        "check_estimator_sparse_matrix",
        "check_estimator_sparse_tag",
        "check_estimators_fit_returns_self",
        "check_estimators_overwrite_params",
        "check_f_contiguous_array_estimator",
        "check_fit2d_predict1d",
        "check_fit_score_takes_y",
        "check_methods_sample_order_invariance",
        "check_methods_subset_invariance",
        "check_n_features_in_after_fitting",
        "check_positive_only_tag_during_fit",
        "check_readonly_memmap_input",
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
        "check_sample_weights_list",
        "check_supervised_y_2d",
    },
    3: {
        "check_all_zero_sample_weights_error",
        "check_classifier_data_not_an_array",
        "check_classifiers_classes",
        "check_classifiers_train",
        "check_dtype_object",
        "check_estimator_sparse_array",
        "check_estimator_sparse_matrix",
        "check_estimators_dtypes",
        "check_estimators_empty_data_messages",
        "check_estimators_nan_inf",
        "check_estimators_pickle",
        "check_fit2d_1feature",
        "check_fit_check_is_fitted",
        "check_fit_idempotent",
        "check_n_features_in",
        "check_pipeline_consistency",
        "check_sample_weights_not_an_array",
        "check_sample_weights_not_overwritten",
        "check_sample_weights_pandas_series",
        "check_sample_weights_shape",
    },
    4: {
        "check_all_zero_sample_weights_error",
        "check_classifier_data_not_an_array",
        "check_classifiers_classes",
        "check_classifiers_train",
        "check_dict_unchanged",
        "check_dont_overwrite_parameters",
        "check_estimator_sparse_tag",
        "check_estimators_dtypes",
        "check_estimators_empty_data_messages",
        "check_estimators_fit_returns_self",
        "check_estimators_nan_inf",
        "check_estimators_overwrite_params",
        "check_estimators_pickle",
        "check_f_contiguous_array_estimator",
        "check_fit2d_1feature",
        "check_fit2d_predict1d",
        "check_fit_check_is_fitted",
        "check_fit_idempotent",
        "check_fit_score_takes_y",
        "check_methods_sample_order_invariance",
        "check_methods_subset_invariance",
        "check_n_features_in",
        "check_n_features_in_after_fitting",
        "check_pipeline_consistency",
        "check_positive_only_tag_during_fit",
        "check_readonly_memmap_input",
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
        "check_sample_weights_list",
        "check_sample_weights_not_an_array",
        "check_sample_weights_not_overwritten",
        "check_sample_weights_pandas_series",
        "check_sample_weights_shape",
        "check_supervised_y_2d",
    },
}


def _expected_failures(estimator):
    if isinstance(estimator, CostSensitiveClassifier):
        return dict.fromkeys(_MISMATCHED[len(estimator.cost_matrix)], _CLASS_COUNT)
    if isinstance(estimator, PriorShiftClassifier):
        return {
            "check_methods_subset_invariance": "EM estimates the priors on the batch predicted "
            "(transductive, as QuaPy's EMQ)",
            "check_non_transformer_estimators_n_iter": "max_iter bounds EM at predict time; "
            "there is no fit-time n_iter_",
        }
    if isinstance(estimator, ConformalClassifier):
        return dict.fromkeys(
            [
                "check_sample_weight_equivalence_on_dense_data",
                "check_sample_weight_equivalence_on_sparse_data",
            ],
            "the held-out split differs between repeated rows and weights",
        )
    return {}


@parametrize_with_checks(
    [
        *(
            CostSensitiveClassifier(LogisticRegression(), cost_matrix=1 - np.eye(k))
            for k in (2, 3, 4)
        ),
        PriorShiftClassifier(LogisticRegression(), priors="em"),
        ConformalClassifier(LogisticRegression(), cv=0.5, error_rate=0.5, random_state=0),
    ],
    expected_failed_checks=_expected_failures,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_grid_search_over_the_wrapped_model_with_a_cost_scorer():
    X, y = load_iris(return_X_y=True)
    C = np.array([[0, 1, 1], [1, 0, 10], [1, 1, 0]])
    search = GridSearchCV(
        CostSensitiveClassifier(ConvexAggregationClassifier(cv="in_sample"), cost_matrix=C),
        {"estimator__alpha": [1e-4, 1e-1]},
        scoring=make_scorer(expected_cost_score, greater_is_better=False, cost_matrix=C),
        cv=3,
    ).fit(X, y)
    assert search.best_score_ <= 0
    assert search.predict(X[:5]).shape == (5,)
