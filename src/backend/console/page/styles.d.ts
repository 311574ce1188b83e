// The build (tsup.config.ts) bundles the imported stylesheet into `app.css`, beside `app.js`.
declare module '*.css' {}
