//! Drawing a generated plan.
