// The project kinds now live in kinds/ (one file per kind, the table in kinds/index.ts); this
// module re-exports them for existing imports.
export * from './kinds/index.ts';
