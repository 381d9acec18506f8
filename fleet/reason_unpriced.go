package fleet

// ReasonUnpricedModel: the task carries a cost limit or a budgeted label
// but a model it would call has no price (llm/pricing), so its cost could
// not be counted; the worker failed it at claim instead of running it
// unbounded. The result's error names the model and the prices.<model>
// setting to add.
const ReasonUnpricedModel = "unpriced_model"
