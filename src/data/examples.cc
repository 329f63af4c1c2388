// SCAFFOLD (replaced by the examples work before this lands).
namespace dragon::data {}
