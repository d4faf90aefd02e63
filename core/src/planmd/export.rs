//! Drawing a PLAN.md plan: `graph --json`, mermaid, ascii and JSON Canvas.
