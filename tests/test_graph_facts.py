"""Which values of one TF1 run the ordering facts call racing, on small graphs built directly."""
import tensorflow as tf

from migrate.harness.graph_facts import analyse


def racing_reads(*fetches):
    facts, _ = analyse(tf.compat.v1.get_default_graph(), list(fetches))
    return facts["racing_reads"]


def test_a_value_computed_from_a_write_output_is_ordered_after_the_write():
    # tf.metrics.* update ops: the fetched value reads the counters through the assignment itself.
    with tf.Graph().as_default():
        total = tf.compat.v1.Variable(0.0, use_resource=False, name="total")
        update = tf.compat.v1.assign_add(total, 1.0) * 2.0
        assert racing_reads(update) == [[]]


def test_a_weight_read_beside_its_update_is_racing():
    with tf.Graph().as_default():
        weight = tf.compat.v1.Variable(1.0, use_resource=False, name="weight")
        step = tf.compat.v1.assign_sub(weight, 0.1).op
        summary = tf.reduce_sum(weight * 3.0)
        assert racing_reads(step, summary) == [[], ["weight"]]
