DROP TABLE signals;
DROP TABLE links;
