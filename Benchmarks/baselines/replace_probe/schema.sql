PRAGMA journal_mode=WAL;
CREATE TABLE "Post" ("_pk" INTEGER PRIMARY KEY, "_version" INTEGER NOT NULL DEFAULT 1, "title" TEXT, "content" TEXT, "externalID" TEXT, "createdAt" REAL, "updatedAt" REAL);
CREATE UNIQUE INDEX "Post_unique_externalID" ON "Post" ("externalID");
CREATE INDEX "Post_index_createdAt" ON "Post" ("createdAt");
CREATE TABLE log (seq INTEGER PRIMARY KEY, t INTEGER NOT NULL, k0, k1, c0, c1, c2, c3, c4, c5, c6);
