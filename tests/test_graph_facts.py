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


def test_randomness_behind_an_in_place_update_counts_as_effective():
    # batch_norm(updates_collections=None): every tensor after it waits for the moving-average write,
    # so the probe cannot fetch the random gradient and must not call the site deterministic.
    with tf.Graph().as_default():
        weight = tf.compat.v1.Variable(1.0, use_resource=False, name="weight")
        moving = tf.compat.v1.Variable(0.0, use_resource=False, name="moving")
        with tf.control_dependencies([tf.compat.v1.assign(moving, 0.5)]):
            normalised = tf.identity(weight * tf.random.uniform([]))
        step = tf.compat.v1.assign_sub(weight, 0.1 * normalised).op
        facts, probed = analyse(tf.compat.v1.get_default_graph(), [step])
        assert facts["random_effective"] and all("random" not in tensor.name for tensor in probed)


def test_randomness_the_probe_can_fetch_is_left_to_the_probe():
    with tf.Graph().as_default():
        weight = tf.compat.v1.Variable(1.0, use_resource=False, name="weight")
        step = tf.compat.v1.assign_sub(weight, 0.1 * tf.random.uniform([])).op
        facts, probed = analyse(tf.compat.v1.get_default_graph(), [step])
        assert not facts["random_effective"] and probed


def test_a_value_after_the_update_reaching_randomness_only_through_it_leaves_it_to_the_probe():
    # TF1 Adam's beta-power update waits for ApplyAdam, whose gradient the probe fetches itself.
    with tf.Graph().as_default():
        weight = tf.compat.v1.Variable(1.0, use_resource=False, name="weight")
        power = tf.compat.v1.Variable(0.9, use_resource=False, name="power")
        update = tf.compat.v1.assign_sub(weight, 0.1 * tf.random.uniform([]))
        with tf.control_dependencies([update]):
            decayed = tf.compat.v1.assign(power, power * 0.9).op
        facts, probed = analyse(tf.compat.v1.get_default_graph(), [decayed])
        assert not facts["random_effective"] and probed
